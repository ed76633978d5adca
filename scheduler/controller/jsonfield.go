package controller

import (
	"regexp"
	"strconv"
)

// protojsonAt matches the position protojson puts in its errors.
var protojsonAt = regexp.MustCompile(`\(line (\d+):(\d+)\)`)

// jsonFieldAt names the JSON field whose value a protojson error points
// at ("" when it cannot tell): protojson says where, as line:column, and
// what type it wanted (google.protobuf.Timestamp), but not which field,
// and an API client needs the field.
func jsonFieldAt(body []byte, err error) string {
	m := protojsonAt.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	off := 0
	for l := 1; l < line && off < len(body); off++ {
		if body[off] == '\n' {
			l++
		}
	}
	off = min(off+col-1, len(body))
	return lastKeyBefore(body[:off])
}

// lastKeyBefore returns the last object key ("key":) in b.
func lastKeyBefore(b []byte) string {
	i := len(b) - 1
	for i >= 0 && b[i] != ':' {
		i--
	}
	for i--; i >= 0 && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'); i-- {
	}
	if i < 0 || b[i] != '"' {
		return ""
	}
	end := i
	for i--; i >= 0 && b[i] != '"'; i-- {
	}
	if i < 0 {
		return ""
	}
	return string(b[i+1 : end])
}
