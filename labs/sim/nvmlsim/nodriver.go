package nvmlsim

import (
	"reflect"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// NoDriver returns an nvml.Interface for a host without the NVIDIA
// library: Init and InitWithFlags fail with ERROR_LIBRARY_NOT_FOUND. On a
// real host any further NVML call would kill the process (an unresolved
// symbol, not a Go panic), so every other method reports its name to
// report (a test passes t.Errorf-like code) and returns zero values with
// ERROR_UNINITIALIZED.
func NoDriver(report func(method string)) nvml.Interface {
	return FailingInit(nvml.ERROR_LIBRARY_NOT_FOUND, report)
}

// FailingInit is NoDriver with another Init result, e.g.
// ERROR_DRIVER_NOT_LOADED or ERROR_LIB_RM_VERSION_MISMATCH.
func FailingInit(ret nvml.Return, report func(method string)) nvml.Interface {
	lib := &mock.Interface{}
	v := reflect.ValueOf(lib).Elem()
	retType := reflect.TypeFor[nvml.Return]()
	for i := range v.NumField() {
		f, field := v.Field(i), v.Type().Field(i)
		name, isFunc := strings.CutSuffix(field.Name, "Func")
		if !isFunc || !field.IsExported() || f.Kind() != reflect.Func {
			continue
		}
		ft := f.Type()
		f.Set(reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
			if name != "Init" && name != "InitWithFlags" && report != nil {
				report(name)
			}
			out := make([]reflect.Value, ft.NumOut())
			for j := range out {
				out[j] = reflect.Zero(ft.Out(j))
				if ft.Out(j) == retType {
					r := nvml.ERROR_UNINITIALIZED
					if name == "Init" || name == "InitWithFlags" {
						r = ret
					}
					out[j] = reflect.ValueOf(r)
				}
			}
			return out
		}))
	}
	return lib
}
