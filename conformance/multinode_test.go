package conformance

import (
	"slices"
	"testing"
)

func TestExpandCounts(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{in: "2(x2)", want: []int{2, 2}},
		{in: "3,2", want: []int{3, 2}},
		{in: "2(x3),1", want: []int{2, 2, 2, 1}},
		{in: "4", want: []int{4}},
		{in: "", wantErr: true},
		{in: "2(x0)", wantErr: true},
		{in: "x(x2)", wantErr: true},
	}
	for _, tt := range tests {
		got, err := expandCounts(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("expandCounts(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
