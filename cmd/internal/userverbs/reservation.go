package userverbs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func newReservationCmdWith(env userEnv) *cobra.Command {
	var cf clientFlags
	var sf showFlags
	cmd := &cobra.Command{
		Use:     "reservation create|update|delete|list|show [KEY=VALUE...|NAME]",
		Aliases: []string{"reservations", "resv"},
		Short:   "Create, change, delete and list admin reservations (scontrol create/update/delete/show reservation, sinfo -T)",
		Long: `Manage admin reservations with scontrol's Key=Value syntax (keys in any case):

  create ReservationName=maint StartTime=now+1hour Duration=2:00:00 Nodes=gpu[1-2]
         Users=alice Accounts=a Flags=MAINT,IGNORE_JOBS
  create StartTime=2026-12-01T08:00 EndTime=2026-12-01T18:00 TRES=gres/gpu:h100=4
         PartitionName=gpu Accounts=physics
  update ReservationName=maint Duration=4:00:00 Users=alice,bob
  delete maint            (or ReservationName=maint)
  list                    (sinfo -T)
  show [maint]            (scontrol show reservation)

StartTime and EndTime take sbatch --begin's forms (now+1hour, 2026-12-01T08:00,
tomorrow, noon...); Duration takes --time's forms or UNLIMITED; NodeCnt=N is
TRES=node=N; Nodes=ALL is every node. Flags: MAINT (jobs must end before it
starts; may overlap other reservations), IGNORE_JOBS (create even while jobs run
there). Jobs use a reservation with --reservation=NAME. Creating, updating and
deleting needs an operator or admin.`,
		Args: argsBetween(1, -1, "create|update|delete|list|show ..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReservation(cmd, env, &cf, sf, "reservation", strings.ToLower(args[0]), args[1:])
		},
	}
	cf.register(cmd)
	sf.register(cmd)
	return cmd
}

// runReservation serves one reservation action for parity reservation and
// scontrol.
func runReservation(cmd *cobra.Command, env userEnv, cf *clientFlags, sf showFlags, verb, action string, args []string) error {
	var spec *pb.ReservationSpec
	var fields []string
	var err error
	switch action {
	case "create", "update":
		if spec, fields, err = parseResvWords(args, env.now(), env.loc); err != nil {
			return usageError(verb, "%v", err)
		}
		if action == "update" && (spec.GetName() == "" || len(fields) == 0) {
			return usageError(verb, "update: give ReservationName=NAME and what to change")
		}
	case "delete":
		if len(args) != 1 {
			return usageError(verb, "delete: give one ReservationName=NAME")
		}
		spec = &pb.ReservationSpec{Name: resvNameArg(args[0])}
	case "show", "list":
		if len(args) > 1 {
			return usageError(verb, "%s: too many arguments %q", action, args[1:])
		}
	default:
		return usageError(verb, "unknown action %q (want create, update, delete, list or show)", action)
	}
	s, err := cf.dial(cmd, verb, env)
	if err != nil {
		return err
	}
	defer s.close()
	w := cmd.OutOrStdout()
	switch action {
	case "create", "update":
		var r *pb.Reservation
		if action == "create" {
			r, err = s.c.CreateReservation(s.ctx, spec)
		} else {
			r, err = s.c.UpdateReservation(s.ctx, spec, fields)
		}
		if err != nil {
			return s.fail(err)
		}
		if cf.json {
			return writeMessagesJSON(w, "reservations", []*pb.Reservation{r})
		}
		if action == "create" {
			_, err = fmt.Fprintf(w, "Reservation created: %s\n", r.GetName())
		} else {
			_, err = fmt.Fprintln(w, "Reservation updated.")
		}
		return err
	case "delete":
		if err := s.c.DeleteReservation(s.ctx, spec.GetName()); err != nil {
			return s.fail(err)
		}
		return nil
	}
	var rs []*pb.Reservation
	if len(args) == 1 {
		r, err := s.c.GetReservation(s.ctx, resvNameArg(args[0]))
		if err != nil {
			return s.fail(err)
		}
		rs = []*pb.Reservation{r}
	} else if rs, err = s.c.ListReservations(s.ctx); err != nil {
		return s.fail(err)
	}
	switch {
	case cf.json:
		return writeMessagesJSON(w, "reservations", rs)
	case action == "list":
		return format.ReservationTable(w, rs, env.render(), true)
	case len(rs) == 0:
		_, err = fmt.Fprintln(w, "No reservations in the system")
		return err
	}
	return format.ShowReservations(w, rs, format.ShowOptions{Env: env.render(), OneLiner: sf.oneLiner})
}

// resvNameArg takes NAME or ReservationName=NAME.
func resvNameArg(w string) string {
	if k, v, ok := strings.Cut(w, "="); ok && isResvNameKey(strings.ToLower(k)) {
		return v
	}
	return w
}

func isResvNameKey(k string) bool {
	return k == "reservationname" || k == "reservation" || k == "resvname"
}

// Reservation keys of scontrol Parity does not implement.
var unsupportedResvKeys = []string{"corecnt", "licenses", "groups", "features", "burstbuffer", "maxstartdelay", "qos",
	"allowedpartitions", "trespernode", "watts", "skip"}

// parseResvWords reads scontrol's reservation Key=Value words into a spec
// and the update fields they set, in the order given. Times are read
// against now in loc; errors name the key and the value.
func parseResvWords(words []string, now time.Time, loc *time.Location) (*pb.ReservationSpec, []string, error) {
	spec := &pb.ReservationSpec{}
	var fields []string
	set := func(f string) {
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	var nodeCnt string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("invalid input %q: want Key=Value", w)
		}
		key := strings.ToLower(k)
		if strings.HasSuffix(key, "+") || strings.HasSuffix(key, "-") {
			return nil, nil, fmt.Errorf("%s: adding or removing with %s= is not supported; give the whole list", w, k)
		}
		switch {
		case isResvNameKey(key):
			spec.Name = v
		case key == "starttime":
			t, err := jobspec.ParseTime(v, now, loc)
			if err != nil {
				return nil, nil, fmt.Errorf("StartTime=%s: %w", v, err)
			}
			spec.StartTime = api.Timestamp(t)
			set("start_time")
		case key == "endtime":
			t, err := jobspec.ParseTime(v, now, loc)
			if err != nil {
				return nil, nil, fmt.Errorf("EndTime=%s: %w", v, err)
			}
			spec.EndTime = api.Timestamp(t)
			set("end_time")
		case key == "duration":
			d, err := jobspec.ParseDuration(v)
			switch {
			case err != nil:
				return nil, nil, fmt.Errorf("Duration=%s: %w", v, err)
			case d == jobspec.Unlimited:
				spec.DurationSeconds = -1
			case d <= 0:
				return nil, nil, fmt.Errorf("Duration=%s: must be positive (or UNLIMITED)", v)
			default:
				spec.DurationSeconds = int64(d / time.Second)
			}
			set("duration")
		case key == "nodes" || key == "nodelist":
			spec.Nodes = v
			set("nodes")
		case key == "nodecnt":
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return nil, nil, fmt.Errorf("NodeCnt=%s: want a positive number of nodes", v)
			}
			nodeCnt = "node=" + v
			set("tres")
		case key == "tres":
			spec.Tres = v
			set("tres")
		case key == "users" || key == "user":
			spec.Users = format.SplitList([]string{v})
			set("users")
		case key == "accounts" || key == "account":
			spec.Accounts = format.SplitList([]string{v})
			set("accounts")
		case key == "flags":
			spec.Flags = format.SplitList([]string{v})
			set("flags")
		case key == "partitionname" || key == "partition":
			spec.Partition = v
			set("partition")
		case slices.Contains(unsupportedResvKeys, key):
			return nil, nil, fmt.Errorf("%s=%s: not supported by Parity", k, v)
		default:
			return nil, nil, fmt.Errorf("%s=%s: unknown reservation key %q", k, v, k)
		}
	}
	if nodeCnt != "" {
		spec.Tres = strings.Trim(nodeCnt+","+spec.GetTres(), ",")
	}
	for _, u := range append(slices.Clone(spec.GetUsers()), spec.GetAccounts()...) {
		if strings.HasPrefix(u, "-") {
			return nil, nil, fmt.Errorf("%q: denying users or accounts with '-' is not supported", u)
		}
	}
	return spec, fields, nil
}
