package trace

import (
	"bytes"
	"os"
	"testing"
)

func benchRead(b *testing.B, name string, format Format) {
	data, err := os.ReadFile(sharedTrace(b, name))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	var tr *Trace
	for i := 0; i < b.N; i++ {
		if tr, err = Read(bytes.NewReader(data), format, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tr.Records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkReadKTH(b *testing.B)    { benchRead(b, "KTH-SP2-1996-2.swf", FormatSWF) }
func BenchmarkReadPhilly(b *testing.B) { benchRead(b, "philly.csv", FormatGPUCSV) }
