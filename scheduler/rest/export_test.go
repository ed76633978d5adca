package rest

// OperationKeys lists the routed operations as "METHOD path" and whether
// each is served, for the tests of package rest_test.
func OperationKeys() map[string]bool {
	out := map[string]bool{}
	for _, op := range operations() {
		out[op.method+" "+op.path] = op.serve != nil
	}
	return out
}

// ParityOperationKeys lists Parity's own operations as "METHOD path".
func ParityOperationKeys() []string {
	var out []string
	for _, op := range parityOperations() {
		out = append(out, op.method+" "+op.path)
	}
	return out
}
