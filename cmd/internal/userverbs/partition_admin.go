package userverbs

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/client"
)

// partitionWords finds PartitionName=NAME (any case) among scontrol's
// words and returns the name and the other settings; ok is false when
// the words do not name a partition.
func partitionWords(words []string) (name string, settings []string, ok bool) {
	for _, w := range words {
		k, v, has := strings.Cut(w, "=")
		if has && strings.EqualFold(k, "partitionname") && !ok {
			name, ok = v, true
			continue
		}
		settings = append(settings, w)
	}
	return name, settings, ok
}

// runPartitionChange is scontrol create|update|delete PartitionName=...:
// silent on success, as Slurm; a refusal is printed as Slurm 22.05
// prints it (a setting it cannot take: "scontrol: error: Invalid input
// ..."; otherwise the action's own prefix: "Error creating the
// partition: ", "slurm_update error: ", "delete_partition
// PartitionName=NAME: ").
func runPartitionChange(cmd *cobra.Command, env userEnv, cf *clientFlags, action string, words []string) error {
	name, settings, _ := partitionWords(words)
	if action == "delete" && len(settings) > 0 {
		return usageError("scontrol", "delete: give PartitionName=NAME alone, not %q", settings)
	}
	s, err := cf.dial(cmd, "scontrol", env)
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.c.ChangePartition(s.ctx, action, name, settings); err != nil {
		return partitionFail(action, name, err)
	}
	return nil
}

func partitionFail(action, name string, err error) error {
	msg := client.Message(err)
	prefix := map[string]string{"create": "Error creating the partition: ", "update": "slurm_update error: ",
		"delete": "delete_partition PartitionName=" + name + ": "}[action]
	if c := status.Code(err); c == codes.InvalidArgument || c == codes.Unimplemented {
		prefix = "scontrol: error: "
	}
	return &exitError{code: 1, err: fmt.Errorf("scontrol: %s %s: %s", action, name, msg), slurmText: prefix + msg}
}

// runReconfigure is scontrol reconfigure: silent when all of the file is
// in force, as Slurm; sections that take a restart are named on stderr; a
// refusal reads as Slurm's ("slurm_reconfigure error: ...").
func runReconfigure(cmd *cobra.Command, env userEnv, cf *clientFlags) error {
	s, err := cf.dial(cmd, "scontrol", env)
	if err != nil {
		return err
	}
	defer s.close()
	r, err := s.c.Reconfigure(s.ctx)
	if err != nil {
		msg := client.Message(err)
		return &exitError{code: 1, err: fmt.Errorf("scontrol: reconfigure: %s", msg), slurmText: "slurm_reconfigure error: " + msg}
	}
	if len(r.GetRestart()) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "scontrol: warning: the cluster file's %s differ from what runs and take effect when the controller restarts\n",
			strings.Join(r.GetRestart(), ", "))
	}
	return nil
}
