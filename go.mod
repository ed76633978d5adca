module github.com/parityhpc/parity

go 1.26.8

require (
	github.com/Masterminds/semver v1.5.0 // indirect
	github.com/NVIDIA/go-dcgm v0.0.0-20240118201113-3385e277e49f // indirect
	github.com/NVIDIA/go-nvml v0.13.4-1 // indirect
	github.com/bits-and-blooms/bitset v1.13.0 // indirect
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jaypipes/ghw v0.27.0 // indirect
	github.com/jaypipes/pcidb v1.1.1 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.25.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	howett.net/plist v1.0.2-0.20250314012144-ee69052608d9 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
