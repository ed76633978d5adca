package trace

import (
	"bytes"
	"testing"
)

// checkInvariants holds for any input a lenient reader accepts: every data
// line is a job, a counted skip or a counted corrupt line, and the jobs
// are replayable and in submit order.
func checkInvariants(t *testing.T, tr *Trace) {
	t.Helper()
	if got := len(tr.Jobs) + tr.Skipped.Total() + tr.BadLines; got != tr.Records {
		t.Fatalf("jobs %d + skipped %d + bad %d != records %d", len(tr.Jobs), tr.Skipped.Total(), tr.BadLines, tr.Records)
	}
	for i, j := range tr.Jobs {
		if j.Runtime <= 0 || j.Procs <= 0 || j.Submit < 0 || j.Requested < 0 || j.User == "" || j.Line <= 0 {
			t.Fatalf("job %d not replayable: %+v", i, j)
		}
		if i > 0 && tr.Jobs[i-1].Submit > j.Submit {
			t.Fatalf("jobs out of submit order at %d", i)
		}
	}
	if len(tr.Errors) > 100 || (tr.BadLines > 0) != (len(tr.Errors) > 0) {
		t.Fatalf("bad lines %d but %d errors kept", tr.BadLines, len(tr.Errors))
	}
}

func FuzzReadSWF(f *testing.F) {
	f.Add([]byte(swfHeader + "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"))
	f.Add([]byte("1 0 0 -1 -1 -1 -1 8 -1 -1 5 -1 -1 -1 -1 -1 -1 -1\n2 1e3 0 1.5 2 0 0 2 1e9 0 3 4 5 6 7 8 9 10\n"))
	f.Add([]byte("; MaxProcs: x\n\t\r\n1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadSWF(bytes.NewReader(data), Options{})
		if err != nil {
			return // only read errors (a line over the limit)
		}
		checkInvariants(t, tr)
		_, serr := ReadSWF(bytes.NewReader(data), Options{Strict: true})
		if (serr != nil) != (tr.BadLines > 0) {
			t.Fatalf("strict error %v but lenient read counted %d bad lines", serr, tr.BadLines)
		}
	})
}

func FuzzReadGPUCSV(f *testing.F) {
	f.Add([]byte("timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,11cb48\n\n"))
	f.Add([]byte("id,user,vc,submit,runtime,gpus,nodes,requested\n1,\"a,b\",v,0,10,8,1,20\n2,a,v,x,1,1,1,1\n"))
	f.Add([]byte("submit,runtime,gpus\n\"1\"\",2,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadGPUCSV(bytes.NewReader(data), Options{})
		if err != nil {
			return // no usable header, or a read error
		}
		checkInvariants(t, tr)
		_, serr := ReadGPUCSV(bytes.NewReader(data), Options{Strict: true})
		if (serr != nil) != (tr.BadLines > 0) {
			t.Fatalf("strict error %v but lenient read counted %d bad lines", serr, tr.BadLines)
		}
	})
}
