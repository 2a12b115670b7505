package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// groupAnnotation marks a command that strictGroups gave an action: its help
// hides the "cuttle osd" usage line that a runnable command would show, so
// the help reads as it did before the command became runnable.
const groupAnnotation = "cuttle-group"

// strictGroups gives every command group of the tree under root (a command
// with subcommands and no action of its own, root included) an action that
// fails, so a script can tell that nothing ran:
//
//   - "cuttle osd df", with no "df" under "osd", fails with
//     unknown command "df" for "cuttle osd", cobra's "Did you mean this?"
//     suggestions and a pointer to --help. Without this, cobra prints the
//     group's help and exits 0 for every group but the root.
//   - "cuttle osd" alone prints the group's help on stderr and fails too:
//     it asked for nothing to be done, as "ceph osd", "git" and "go" alone
//     exit non-zero. --help and "cuttle help osd" still print the help on
//     stdout and succeed.
//
// It runs once on the finished tree, so groups that families add later are
// covered without code of their own. Commands that have an action of their
// own as well as subcommands keep it, and with it their own argument rules.
func strictGroups(root *cobra.Command) {
	// cobra adds "completion" only when the tree runs; add it now so that
	// its group is walked too (adding it again at run time is a no-op).
	root.InitDefaultCompletionCmd()
	markGroups(root)
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(),
		"{{if .Runnable}}\n  {{.UseLine}}{{end}}",
		`{{if and .Runnable (not (index .Annotations "`+groupAnnotation+`"))}}`+"\n  {{.UseLine}}{{end}}", 1))
}

func markGroups(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		markGroups(sub)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[groupAnnotation] = "true"
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = runGroup
}

// runGroup is the action of a command group: it runs only when no
// subcommand matched.
func runGroup(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		// The help is the diagnostic here, so it goes to stderr.
		stdout := cmd.OutOrStdout()
		cmd.SetOut(cmd.ErrOrStderr())
		err := cmd.Help()
		cmd.SetOut(stdout)
		if err != nil {
			return err
		}
		return fmt.Errorf("no command given for %q: choose one of those listed above",
			cmd.CommandPath())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		b.WriteString("\n\nDid you mean this?\n")
		for _, name := range s {
			fmt.Fprintf(&b, "\t%s\n", name)
		}
	} else {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nRun '%s --help' for usage.", cmd.CommandPath())
	return fmt.Errorf("%s", b.String())
}
