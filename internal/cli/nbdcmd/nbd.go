package nbdcmd

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// DefaultPort is NBD's registered port.
const DefaultPort = 10809

// DefaultListen is where serve listens unless told: loopback only, so
// that an image is not exported to the network by accident.
const DefaultListen = "tcp://127.0.0.1:10809"

// AddNBDCommands adds "cuttle nbd", which connects with dial.
func AddNBDCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	c := &cobra.Command{
		Use:   "nbd COMMAND ...",
		Short: "Export block images over NBD (qemu, nbdcopy, nbdfuse, the kernel's nbd-client)",
		Long: `NBD server commands. "cuttle nbd serve rbd/disk" exports image disk of
pool rbd as export "disk" on ` + DefaultListen + `; qemu-img, nbdcopy,
nbdinfo, nbdfuse and nbd-client reach it as nbd://127.0.0.1/disk.
docs/NBD.md shows how to attach an export.`,
	}
	c.AddCommand(serveCommand(out, dial), lsCommand(out))
	root.AddCommand(c)
}

// listenAddr is a parsed --listen: a network for net.Listen and an
// address.
type listenAddr struct{ network, addr string }

func (l listenAddr) String() string {
	if l.network == "unix" {
		return "unix://" + l.addr
	}
	return "tcp://" + l.addr
}

// parseListen parses "tcp://HOST[:PORT]", "unix:///path" or "HOST:PORT";
// the port defaults to 10809.
func parseListen(s string) (listenAddr, error) {
	if !strings.Contains(s, "://") {
		s = "tcp://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return listenAddr{}, fmt.Errorf("bad address %q: want tcp://HOST:PORT or unix:///path (EINVAL)", s)
	}
	switch u.Scheme {
	case "unix":
		if u.Host != "" || u.Path == "" {
			return listenAddr{}, fmt.Errorf("bad address %q: a Unix socket is unix:///absolute/path (EINVAL)", s)
		}
		return listenAddr{"unix", u.Path}, nil
	case "tcp", "nbd":
		if u.Host == "" || (u.Path != "" && u.Path != "/") {
			return listenAddr{}, fmt.Errorf("bad address %q: want tcp://HOST:PORT (EINVAL)", s)
		}
		host := u.Host
		if u.Port() == "" {
			host = fmt.Sprintf("%s:%d", strings.TrimSuffix(host, ":"), DefaultPort)
		}
		return listenAddr{"tcp", host}, nil
	}
	return listenAddr{}, fmt.Errorf("bad address %q: the scheme is tcp:// or unix:// (EINVAL)", s)
}
