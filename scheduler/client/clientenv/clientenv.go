// Package clientenv is where a client finds its controller and its
// credential: the flags' defaults, the PARITY_* environment variables and
// the token file. It imports the standard library only, so that the lean
// sbatch (no gRPC, no protobuf) resolves them exactly as every other verb
// does; scheduler/client re-exports it.
package clientenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultAddr is where the controller listens unless configured otherwise
// (slurmctld's port).
const DefaultAddr = "127.0.0.1:6817"

// Environment variables the client reads.
const (
	EnvToken      = "PARITY_TOKEN"
	EnvController = "PARITY_CONTROLLER"
	// EnvCA names a PEM file of the CA that signed the controller's TLS
	// certificate; set, the client speaks TLS.
	EnvCA = "PARITY_CA"
)

// ErrNoToken is returned by ResolveToken when no source holds a token.
var ErrNoToken = errors.New("client: no token: pass --token, set PARITY_TOKEN or write ~/.config/parity/token (an admin makes one with `parity token create --user NAME`)")

// ResolveToken picks the token: the flag value, else $PARITY_TOKEN, else
// the first line of ~/.config/parity/token.
func ResolveToken(flag string) (string, error) {
	if t := strings.TrimSpace(flag); t != "" {
		return t, nil
	}
	if t := strings.TrimSpace(os.Getenv(EnvToken)); t != "" {
		return t, nil
	}
	path, err := TokenPath()
	if err != nil {
		return "", ErrNoToken
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ErrNoToken
	}
	if t := strings.TrimSpace(string(b)); t != "" {
		return t, nil
	}
	return "", ErrNoToken
}

// TokenPath is where a user's token is kept: ~/.config/parity/token
// (under $XDG_CONFIG_HOME when set).
func TokenPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("client: config dir: %w", err)
	}
	return filepath.Join(dir, "parity", "token"), nil
}

// ResolveAddr picks the controller address: the flag value, else
// $PARITY_CONTROLLER, else DefaultAddr.
func ResolveAddr(flag string) string {
	if flag != "" {
		return flag
	}
	if a := os.Getenv(EnvController); a != "" {
		return a
	}
	return DefaultAddr
}

// Hint says what a person can do about a refused or failed call, by the
// gRPC code's name ("Unauthenticated", ...) as the controller reports it
// over gRPC and HTTP alike; "" when there is nothing to add.
func Hint(code, addr string) string {
	switch code {
	case "Unauthenticated":
		return "hint: the controller did not accept your token (missing, expired or from another cluster); an admin makes one with `parity token create --user NAME`; pass it with --token, $" + EnvToken + " or ~/.config/parity/token"
	case "PermissionDenied":
		return "hint: your token's role does not allow this: users act on their own jobs only; draining nodes and acting on others' jobs need an operator or admin token"
	case "Unavailable", "DeadlineExceeded":
		return "hint: is the controller running at " + addr + "? set --controller or $" + EnvController
	}
	return ""
}
