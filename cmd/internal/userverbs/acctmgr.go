package userverbs

import (
	"bufio"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// acctmgrArgs is a parsed sacctmgr command line.
type acctmgrArgs struct {
	client                                 clientFlags
	immediate, noHeader, parsable, parsed2 bool
	verb, entity                           string
	names, where, set                      []string
	format                                 []string
	withAssoc, tree                        bool
}

// acctmgrVerbs maps sacctmgr's verbs (and their synonyms) to Parity's.
var acctmgrVerbs = map[string]string{"add": "add", "create": "add", "modify": "modify", "update": "modify",
	"delete": "delete", "remove": "delete", "show": "show", "list": "show"}

// acctmgrEntity maps sacctmgr's entity words to the ones Parity serves.
func acctmgrEntity(w string) (string, bool) {
	switch strings.ToLower(w) {
	case "account", "accounts", "acct":
		return "account", true
	case "user", "users":
		return "user", true
	case "qos":
		return "qos", true
	case "association", "associations", "assoc":
		return "assoc", true
	case "transaction", "transactions", "txn":
		return "txn", true
	case "cluster", "clusters":
		return "cluster", true
	case "tres":
		return "tres", true
	}
	return "", false
}

// parseAcctmgr reads sacctmgr's command line: options anywhere, then
// VERB ENTITY [NAMES] [where COND...] [set KEY=VALUE...] [format=...].
// Bare words name entities; KEY=VALUE words are conditions for modify,
// delete and show (before "set"), and settings for add.
func parseAcctmgr(words []string) (acctmgrArgs, error) {
	var a acctmgrArgs
	var rest []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, attached := strings.Cut(w, "=")
		switch {
		case w == "--immediate":
			a.immediate = true
		case w == "--noheader":
			a.noHeader = true
		case w == "--parsable":
			a.parsable = true
		case w == "--parsable2":
			a.parsed2 = true
		case isConnFlag(name):
			if !attached {
				if i+1 >= len(words) {
					return a, fmt.Errorf("%s requires a value", name)
				}
				i++
				value = words[i]
			}
			a.client.setConn(name, value)
		case len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.Trim(w[1:], "inpPQ") == "":
			a.immediate = a.immediate || strings.Contains(w, "i")
			a.noHeader = a.noHeader || strings.Contains(w, "n")
			a.parsable = a.parsable || strings.Contains(w, "p")
			a.parsed2 = a.parsed2 || strings.Contains(w, "P")
		case strings.HasPrefix(w, "-"):
			return a, fmt.Errorf("unknown option %s", w)
		default:
			rest = append(rest, w)
		}
	}
	if len(rest) < 2 {
		return a, fmt.Errorf("give a command and an entity: sacctmgr add|modify|delete|show account|user|qos ...")
	}
	verb, ok := acctmgrVerbs[strings.ToLower(rest[0])]
	if !ok {
		return a, fmt.Errorf("invalid command %q: want add, modify, delete or show", rest[0])
	}
	entity, ok := acctmgrEntity(rest[1])
	if !ok || (verb != "show" && (entity == "assoc" || entity == "txn" || entity == "cluster" || entity == "tres")) {
		return a, fmt.Errorf("%s %s: not served (Parity's sacctmgr serves account, user, qos; show also association, cluster, tres and transaction)", rest[0], rest[1])
	}
	a.verb, a.entity = verb, entity
	return a, a.words(rest[2:])
}

// words sorts the words after the entity into names, conditions,
// settings and the output options.
func (a *acctmgrArgs) words(ws []string) error {
	inSet := false
	for _, w := range ws {
		k, v, kv := strings.Cut(w, "=")
		lk := strings.ToLower(k)
		switch {
		case !kv && lk == "where":
			inSet = false
		case !kv && lk == "set":
			if a.verb != "modify" {
				return fmt.Errorf("'set' is for modify")
			}
			inSet = true
		case !kv && lk == "withassoc":
			a.withAssoc = true
		case !kv && lk == "tree":
			a.tree = true
		case !kv:
			a.names = append(a.names, strings.Split(w, ",")...)
		case lk == "format":
			a.format = append(a.format, strings.Split(v, ",")...)
		case inSet || a.verb == "add":
			if a.verb == "add" && (lk == "name" || lk == "names") {
				a.names = append(a.names, strings.Split(v, ",")...)
				continue
			}
			a.set = append(a.set, w)
		default:
			a.where = append(a.where, w)
		}
	}
	if a.verb == "modify" && len(a.set) == 0 {
		return fmt.Errorf("modify: nothing to set: modify %s NAME set KEY=VALUE", a.entity)
	}
	return nil
}

func newAcctmgrCmdWith(env userEnv) *cobra.Command {
	return &cobra.Command{
		Use:   "acctmgr [-i] [-n] [-p|-P] VERB ENTITY ...",
		Short: "Accounts, users and QOS at run time (sacctmgr)",
		Long: `Behave as sacctmgr over the controller's accounting state (durable; cluster.yaml
seeds it on the first start):
  add|create account NAME[,NAME] [Parent=P] [Fairshare=N] [Description=D] [Organization=O] [LIMIT=V...]
  add user NAME[,NAME] Account=A[,A] [Fairshare=N|parent]
  add qos NAME [Priority=N] [Flags=DenyOnLimit] [Preempt=Q,..] [PreemptMode=M] [GraceTime=T] [LIMIT=V...]
  modify account|user|qos NAME [where COND...] set KEY=VALUE...
  delete|remove account|user|qos NAME [where Account=A]
  show|list account|user|association|qos|cluster|tres|transaction [NAME] [where COND...] [format=F,...] [withassoc] [tree]
LIMIT is GrpTRES, MaxTRES, MaxTRESPerNode, MaxTRESPU, MaxTRESPA, MaxJobs(PU), MaxJobsPA,
MaxSubmitJobs(PU), MaxSubmitPA, GrpJobs, GrpSubmitJobs or MaxWall (-1 clears). Changes are
for admins (operators: accounts and users; AdminLevel=None|Operator|Administrator
sets one); everyone may show. Without -i sacctmgr asks before committing.`,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, words []string) error {
			if slices.Contains(words, "--help") || slices.Contains(words, "-h") || len(words) == 0 {
				return cmd.Help()
			}
			a, err := parseAcctmgr(words)
			if err != nil {
				return usageError("sacctmgr", "%v", err)
			}
			s, err := a.client.dial(cmd, "sacctmgr", env)
			if err != nil {
				return err
			}
			defer s.close()
			if a.verb == "show" {
				return runAcctmgrShow(cmd, s, &a)
			}
			return runAcctmgrChange(cmd, env, s, &a)
		},
	}
}

// runAcctmgrChange asks the controller for the change (first as a dry
// run when it must ask), prints sacctmgr's summary of it and, without
// -i, commits only on "y".
func runAcctmgrChange(cmd *cobra.Command, env userEnv, s *session, a *acctmgrArgs) error {
	out := cmd.OutOrStdout()
	req := &pb.AssocChangeRequest{Action: a.verb, Entity: a.entity, Names: a.names, Where: a.where, Set: a.set, DryRun: !a.immediate}
	changed, err := s.c.ChangeAssoc(s.ctx, req)
	if err != nil {
		if status.Code(err) == codes.PermissionDenied && a.verb == "add" {
			// Slurm shows what it would add before the refusal.
			if tab, terr := s.c.AssocTable(s.ctx); terr == nil {
				fmt.Fprint(out, acctmgrSummary(a, requestedAdds(a, tab), tab))
			}
		}
		return acctmgrFail(cmd, a, err)
	}
	tab, err := s.c.AssocTable(s.ctx)
	if err != nil {
		return s.fail(err)
	}
	fmt.Fprint(out, acctmgrSummary(a, changed, tab))
	if a.immediate {
		return nil
	}
	fmt.Fprint(out, "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ")
	answer := ""
	if env.stdin != nil {
		answer, _ = bufio.NewReader(env.stdin).ReadString('\n')
	}
	if a := strings.TrimSpace(answer); a != "y" && a != "Y" {
		fmt.Fprintln(out, "\n Changes Discarded")
		return nil
	}
	req.DryRun = false
	if _, err := s.c.ChangeAssoc(s.ctx, req); err != nil {
		return acctmgrFail(cmd, a, err)
	}
	return nil
}

// acctmgrFail prints a refusal as sacctmgr does, status 1: "Nothing
// ..." on stdout, most else on stderr (as the anchor printed them).
func acctmgrFail(cmd *cobra.Command, a *acctmgrArgs, err error) error {
	msg := client.Message(err)
	w := cmd.OutOrStdout()
	switch status.Code(err) {
	case codes.PermissionDenied:
		w = cmd.ErrOrStderr()
		if a.verb != "add" && !strings.HasPrefix(msg, "Access/permission denied") {
			// Slurm's own refusal, then the request's.
			fmt.Fprintf(w, "sacctmgr: error: %s\n Error with request: Access/permission denied\n", msg)
			return &exitError{code: 1, err: fmt.Errorf("sacctmgr: %s", msg), printed: true}
		}
		what := map[string]string{"add": "adding", "modify": "modifying", "delete": "deleting"}[a.verb]
		msg = fmt.Sprintf("Problem %s %s: %s", what, plural(a.entity), msg)
	case codes.NotFound:
		if strings.HasPrefix(msg, "This account") || strings.HasPrefix(msg, "Parent account") {
			w = cmd.ErrOrStderr()
		}
	case codes.InvalidArgument:
		// Slurm 22.05 prints an unknown option on stderr, but a QOS's on stdout.
		if !strings.HasPrefix(msg, "Unknown option") || a.entity != "qos" {
			w = cmd.ErrOrStderr()
		}
	case codes.Unavailable, codes.DeadlineExceeded, codes.Unauthenticated:
		return &exitError{code: 1, err: fmt.Errorf("sacctmgr: %s", msg)}
	}
	if strings.HasPrefix(msg, "sacctmgr: error: ") || strings.HasPrefix(msg, "You gave a bad") {
		fmt.Fprintln(w, msg) // Slurm prints these two at the line's start
	} else {
		fmt.Fprintln(w, " "+strings.TrimPrefix(msg, " "))
	}
	return &exitError{code: 1, err: fmt.Errorf("sacctmgr: %s", msg), printed: true}
}

// requestedAdds is what an add asks for that the table lacks (names, or
// "user/account" for users), for the summary Slurm prints before refusing.
func requestedAdds(a *acctmgrArgs, tab *pb.AssocTable) []string {
	var out []string
	if a.entity != "user" {
		for _, n := range a.names {
			exists := accountOf(tab, n) != nil
			if a.entity == "qos" {
				exists = slices.ContainsFunc(tab.GetQos(), func(q *pb.AssocQOS) bool { return q.GetName() == n })
			}
			if !exists {
				out = append(out, n)
			}
		}
		return out
	}
	accts := settingOf(append(slices.Clone(a.set), a.where...), "account", "accounts")
	for _, n := range a.names {
		for _, acct := range strings.Split(accts, ",") {
			if acct != "" && userOf(accountOf(tab, acct), n) == nil {
				out = append(out, n+"/"+acct)
			}
		}
	}
	return out
}

func plural(entity string) string {
	if entity == "qos" {
		return "QOS"
	}
	return entity + "s"
}
