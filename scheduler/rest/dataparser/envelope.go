package dataparser

// Envelope is v0.0.44_openapi_resp: what every answer carries.
type Envelope struct {
	Meta     *Meta      `json:"meta,omitempty"`
	Errors   []APIError `json:"errors"`
	Warnings []Warning  `json:"warnings"`
}

type Meta struct {
	Plugin  MetaPlugin  `json:"plugin"`
	Client  MetaClient  `json:"client"`
	Command []string    `json:"command"`
	Slurm   MetaRelease `json:"slurm"`
}

type MetaPlugin struct {
	Type              string `json:"type"`
	Name              string `json:"name"`
	DataParser        string `json:"data_parser"`
	AccountingStorage string `json:"accounting_storage"`
}

type MetaClient struct {
	Source string `json:"source"`
	User   string `json:"user"`
	Group  string `json:"group"`
}

type MetaRelease struct {
	Version struct {
		Major string `json:"major"`
		Micro string `json:"micro"`
		Minor string `json:"minor"`
	} `json:"version"`
	Release string `json:"release"`
	Cluster string `json:"cluster"`
}

// APIError is v0.0.44_openapi_error.
type APIError struct {
	Description string `json:"description"`
	ErrorNumber int32  `json:"error_number"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

// Warning is v0.0.44_openapi_warning.
type Warning struct {
	Description string `json:"description"`
	Source      string `json:"source"`
}

// NoVal is the uintNN_no_val_struct family: a number that may be unset
// or infinite.
type NoVal struct {
	Set      bool  `json:"set"`
	Infinite bool  `json:"infinite"`
	Number   int64 `json:"number"`
}

// NoValF is v0.0.44_float64_no_val_struct.
type NoValF struct {
	Set      bool    `json:"set"`
	Infinite bool    `json:"infinite"`
	Number   float64 `json:"number"`
}

func Num(n int64) *NoVal { return &NoVal{Set: true, Number: n} }
func Unset() *NoVal      { return &NoVal{} }
func Infinite() *NoVal   { return &NoVal{Set: false, Infinite: true} }
func NumOrInf(n int64) *NoVal {
	if n == 0 {
		return Infinite()
	}
	return Num(n)
}

// Env is the envelope of an answer that embeds it, for its writer.
func (e *Envelope) Env() *Envelope { return e }
