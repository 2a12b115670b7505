package launcher

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// listenerPID returns the process that listens on TCP hostport, or 0 if
// none can be found (none listens, or the process is another user's):
// the listening socket's inode from /proc/net/tcp{,6}, then the process
// with a descriptor on it.
func listenerPID(hostport string) int {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return 0
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0
	}
	var inodes []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		inodes = append(inodes, listeningInodes(b, net.ParseIP(host), uint16(port))...)
	}
	if len(inodes) == 0 {
		return 0
	}
	want := map[string]bool{}
	for _, in := range inodes {
		want["socket:["+in+"]"] = true
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fdDir := "/proc/" + e.Name() + "/fd"
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(fdDir + "/" + fd.Name()); err == nil && want[l] {
				return pid
			}
		}
	}
	return 0
}

// listeningInodes returns the inodes of the sockets in a /proc/net/tcp
// table (a header line, then "sl local rem st ... uid timeout inode ...",
// addresses as hex IP:PORT in the kernel's byte order) that listen
// (state 0A) on port at ip or at the wildcard address.
func listeningInodes(table []byte, ip net.IP, port uint16) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		addr, ps, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(ps, 16, 16); err != nil || uint16(p) != port {
			continue
		}
		a, err := procIP(addr)
		if err != nil {
			continue
		}
		if a.IsUnspecified() || ip == nil || a.Equal(ip) {
			out = append(out, f[9])
		}
	}
	return out
}

// procIP decodes an address of /proc/net/tcp: 4 or 16 bytes in hex,
// each 32-bit word printed as a number in the host's byte order.
func procIP(s string) (net.IP, error) {
	if len(s) != 8 && len(s) != 32 {
		return nil, fmt.Errorf("address %q", s)
	}
	b := make(net.IP, len(s)/2)
	for i := 0; i < len(b); i += 4 {
		w, err := strconv.ParseUint(s[2*i:2*i+8], 16, 32)
		if err != nil {
			return nil, err
		}
		binary.NativeEndian.PutUint32(b[i:], uint32(w))
	}
	return b, nil
}

// procArgs returns the command line of pid, or nil.
func procArgs(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}
