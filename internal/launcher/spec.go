package launcher

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Kind is a type of daemon.
type Kind string

// Kinds of daemons.
const (
	// KindMon is a monitor (`cuttle mon run`).
	KindMon Kind = "mon"
	// KindOSD is an OSD (`cuttle osd run`); its ID is its OSD number.
	KindOSD Kind = "osd"
	// KindMDS is an MDS daemon (`cuttle mds run`), named a, b, ...
	KindMDS Kind = "mds"
	// KindS3 is an S3 gateway (`cuttle s3 serve`), named a. It has no
	// data directory (everything it keeps is in the cluster) and no
	// metrics port.
	KindS3 Kind = "s3"
	// KindNBD is an NBD server (`cuttle nbd serve`) exporting one block
	// image, named a. Like the gateway it has no data directory and no
	// metrics port.
	KindNBD Kind = "nbd"
)

// Daemon is the spec of one daemon of a local cluster: everything needed
// to create it, start it and find it again. Paths are absolute.
type Daemon struct {
	// Kind is the daemon's type, ID its name within the type: mon and a
	// make mon.a.
	Kind Kind   `json:"kind"`
	ID   string `json:"id"`
	// Addr is the HOST:PORT the daemon serves the cluster on.
	Addr string `json:"addr"`
	// MetricsAddr is the HOST:PORT of its Prometheus metrics ("" for
	// an S3 gateway or an NBD server).
	MetricsAddr string `json:"metrics_addr"`
	// Data is the daemon's data directory ("" for an S3 gateway or an
	// NBD server).
	Data string `json:"data"`
	// Log receives the daemon's standard output and error.
	Log string `json:"log"`
	// Args are the arguments to the cuttle binary that run the daemon in
	// the foreground (e.g. mon run --id a --data DIR/mon.a ...).
	Args []string `json:"args"`
}

// Name is the daemon's entity name, e.g. mon.a.
func (d Daemon) Name() string { return string(d.Kind) + "." + d.ID }

// Cluster is the launcher's record of a cluster, kept in DIR/cluster.json.
type Cluster struct {
	// Version is the record's format version (recordVersion).
	Version int `json:"version"`
	// FSID is the cluster's id.
	FSID string `json:"fsid"`
	// Auth is the authentication mode: cephx or none.
	Auth string `json:"auth"`
	// Dir is the cluster's directory (absolute); Conf its configuration
	// file and Keyring client.admin's keyring, both in Dir.
	Dir     string `json:"dir"`
	Conf    string `json:"conf"`
	Keyring string `json:"keyring"`
	// Daemons in start order: monitors first, then OSDs, then MDSs,
	// then the S3 gateway and the NBD server.
	Daemons []Daemon `json:"daemons"`
	// Pending are the steps of the cluster's creation still to do, in
	// order: "setup" (Config.Setup), then the names of the daemons other
	// than monitors whose data directories are still to be made. They
	// need the monitors running; Up does them and removes each from the
	// record once done, so a creation that failed half-way resumes.
	Pending []string `json:"pending,omitempty"`
}

// setupStep is the Pending step that runs Config.Setup.
const setupStep = "setup"

// Of returns the specs of the daemons of kind k, in order.
func (c *Cluster) Of(k Kind) []Daemon {
	var out []Daemon
	for _, d := range c.Daemons {
		if d.Kind == k {
			out = append(out, d)
		}
	}
	return out
}

// FrontEnd reports whether daemons of kind k serve clients on top of the
// cluster (the S3 gateway, the NBD server): Up starts them only once
// the other daemons are up and Config.Prepare has run.
func (k Kind) FrontEnd() bool { return k == KindS3 || k == KindNBD }

// split returns copies of c holding its daemons other than front ends
// and its front ends.
func (c *Cluster) split() (core, fronts *Cluster) {
	cc, ff := *c, *c
	cc.Daemons, ff.Daemons = nil, nil
	for _, d := range c.Daemons {
		if d.Kind.FrontEnd() {
			ff.Daemons = append(ff.Daemons, d)
		} else {
			cc.Daemons = append(cc.Daemons, d)
		}
	}
	return &cc, &ff
}

// only returns a copy of c holding only the daemons of kind k.
func (c *Cluster) only(k Kind) *Cluster {
	cc := *c
	cc.Daemons = c.Of(k)
	return &cc
}

// MonHost is the monitors as NAME=HOST:PORT,..., as mon_host and
// `cuttle mon mkfs --mon-host` take them.
func (c *Cluster) MonHost() string {
	s := ""
	for _, d := range c.Daemons {
		if d.Kind != KindMon {
			continue
		}
		if s != "" {
			s += ","
		}
		s += d.ID + "=" + d.Addr
	}
	return s
}

// Mons returns the monitors' specs.
func (c *Cluster) Mons() []Daemon { return c.Of(KindMon) }

// OSDs returns the OSDs' specs.
func (c *Cluster) OSDs() []Daemon { return c.Of(KindOSD) }

// MDSs returns the MDS daemons' specs.
func (c *Cluster) MDSs() []Daemon { return c.Of(KindMDS) }

// S3Gateways returns the S3 gateways' specs.
func (c *Cluster) S3Gateways() []Daemon { return c.Of(KindS3) }

// NBDServers returns the NBD servers' specs.
func (c *Cluster) NBDServers() []Daemon { return c.Of(KindNBD) }

// Defaults of [Options].
const (
	DefaultHost = "127.0.0.1"
	// DefaultBasePort is the first port tried for monitors, then OSDs.
	// Ceph's daemons use 3300 and 6789 (monitors), 6800-7300 (OSDs,
	// MDSs, managers) and 7480 (the S3 gateway); 7500-7699 is clear of
	// all of them and below Linux's ephemeral range (32768-60999).
	DefaultBasePort = 7500
	// MetricsOffset is how far above the base port the metrics ports
	// start: daemons' addresses are searched in [base, base+100),
	// metrics in [base+100, base+200).
	MetricsOffset = 100
	// DefaultOSDs is how many OSDs a new cluster gets unless told.
	DefaultOSDs = 3
	// NoOSDs as [Options.OSDs] makes a cluster of monitors only.
	NoOSDs = -1
	// MaxOSDs bounds [Options.OSDs]: every daemon's port must fit in
	// the range searched.
	MaxOSDs = 64
	// PortRange is how many ports each search may try.
	PortRange = 100
	// MaxMDSs bounds [Options.MDSs].
	MaxMDSs = len(mdsIDs)
)

// Options say what cluster to make.
type Options struct {
	// Dir is the directory that holds everything. Required.
	Dir string
	// Mons is the number of monitors: 1, 3 or 5 (0 means 1 for a new
	// cluster, and whatever an existing one has).
	Mons int
	// OSDs is the number of OSDs, up to MaxOSDs (0 means DefaultOSDs
	// for a new cluster, and whatever an existing one has; NoOSDs means
	// none).
	OSDs int
	// Host is the address daemons listen on (default 127.0.0.1).
	Host string
	// BasePort is the first port tried for monitors; metrics ports start
	// at BasePort+MetricsOffset (default DefaultBasePort).
	BasePort int
	// Auth is a new cluster's authentication: "cephx" (the default) or
	// "none".
	Auth string
	// MDSs is the number of MDS daemons of a new cluster, up to MaxMDSs
	// (0: none; the first takes a file system's rank, the others stand
	// by). An existing cluster keeps what it has.
	MDSs int
	// S3 gives a new cluster an S3 gateway, s3.a, started after the
	// other daemons. An existing cluster keeps what it has.
	S3 bool
	// NBD, if set, is a block image (POOL/IMAGE) a new cluster exports
	// over NBD: an NBD server, nbd.a, started after the other daemons.
	// Config.Prepare makes the image. An existing cluster keeps what it
	// has.
	NBD string
}

func (o Options) withDefaults() Options {
	if o.Mons == 0 {
		o.Mons = 1
	}
	switch {
	case o.OSDs == 0:
		o.OSDs = DefaultOSDs
	case o.OSDs == NoOSDs:
		o.OSDs = 0
	}
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.BasePort == 0 {
		o.BasePort = DefaultBasePort
	}
	if o.Auth == "" {
		o.Auth = "cephx"
	}
	return o
}

func (o Options) validate() error {
	if o.Dir == "" {
		return errors.New("launcher: no directory")
	}
	switch o.Mons {
	case 1, 3, 5:
	default:
		return fmt.Errorf("launcher: %d monitors (want 1, 3 or 5)", o.Mons)
	}
	if o.OSDs < 0 || o.OSDs > MaxOSDs {
		return fmt.Errorf("launcher: %d OSDs (want 0 to %d)", o.OSDs, MaxOSDs)
	}
	if o.MDSs < 0 || o.MDSs > MaxMDSs {
		return fmt.Errorf("launcher: %d MDS daemons (want 0 to %d)", o.MDSs, MaxMDSs)
	}
	if pool, image, ok := strings.Cut(o.NBD, "/"); o.NBD != "" && (!ok || pool == "" || image == "" || strings.ContainsAny(image, "/@")) {
		return fmt.Errorf("launcher: NBD image %q (want POOL/IMAGE)", o.NBD)
	}
	if o.BasePort < 1024 || o.BasePort+MetricsOffset+PortRange > 65535 {
		return fmt.Errorf("launcher: base port %d (want 1024 to %d)", o.BasePort, 65535-MetricsOffset-PortRange)
	}
	if net.ParseIP(o.Host) == nil {
		return fmt.Errorf("launcher: host %q is not an IP address", o.Host)
	}
	if o.Auth != "cephx" && o.Auth != "none" {
		return fmt.Errorf("launcher: auth %q (want cephx or none)", o.Auth)
	}
	return nil
}

// monIDs name monitors as Ceph's tools do: a, b, c, ...; mdsIDs name
// MDS daemons the same way.
const (
	monIDs = "abcde"
	mdsIDs = "abcdefgh"
)

// Plan builds the record of a new cluster in o.Dir (absolute) with the
// given fsid: the specs of its daemons, monitors then OSDs (numbered 0,
// 1, ... as the monitors will number them), each with its data
// directory, log file, and an address and a metrics address on ports that
// free reports free, searched upward from o.BasePort and
// o.BasePort+MetricsOffset. It starts nothing and writes nothing.
func Plan(o Options, fsid string, free func(hostport string) bool) (*Cluster, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(o.Dir) {
		return nil, fmt.Errorf("launcher: directory %q is not absolute", o.Dir)
	}
	// Every daemon serves on a port; all but the gateway also serve
	// metrics.
	n := o.Mons + o.OSDs + o.MDSs
	fronts := 0
	if o.S3 {
		fronts++
	}
	if o.NBD != "" {
		fronts++
	}
	addrs, err := pickPorts(o.Host, o.BasePort, n+fronts, free)
	if err != nil {
		return nil, fmt.Errorf("launcher: daemon ports: %w", err)
	}
	metrics, err := pickPorts(o.Host, o.BasePort+MetricsOffset, n, free)
	if err != nil {
		return nil, fmt.Errorf("launcher: metrics ports: %w", err)
	}
	c := &Cluster{
		Version: recordVersion,
		FSID:    fsid,
		Auth:    o.Auth,
		Dir:     o.Dir,
		Conf:    filepath.Join(o.Dir, "cuttle.conf"),
		Keyring: filepath.Join(o.Dir, "admin.keyring"),
	}
	for i := range o.Mons {
		c.Daemons = append(c.Daemons, monSpec(o.Dir, monIDs[i:i+1], addrs[i], metrics[i]))
	}
	c.Pending = []string{setupStep}
	for i := range o.OSDs {
		d := osdSpec(c, i, addrs[o.Mons+i], metrics[o.Mons+i])
		c.Daemons = append(c.Daemons, d)
		c.Pending = append(c.Pending, d.Name())
	}
	for i := range o.MDSs {
		at := o.Mons + o.OSDs + i
		d := mdsSpec(c, mdsIDs[i:i+1], addrs[at], metrics[at])
		c.Daemons = append(c.Daemons, d)
		c.Pending = append(c.Pending, d.Name())
	}
	at := n
	if o.S3 {
		d := s3Spec(c, "a", addrs[at])
		c.Daemons = append(c.Daemons, d)
		c.Pending = append(c.Pending, d.Name())
		at++
	}
	if o.NBD != "" {
		d := nbdSpec(c, "a", addrs[at], o.NBD)
		c.Daemons = append(c.Daemons, d)
		c.Pending = append(c.Pending, d.Name())
	}
	return c, nil
}

// nbdSpec is the spec of NBD server id exporting image (POOL/IMAGE) at
// addr over TCP; it finds the monitors through the cluster's
// configuration file.
func nbdSpec(c *Cluster, id, addr, image string) Daemon {
	d := Daemon{Kind: KindNBD, ID: id, Addr: addr}
	d.Log = filepath.Join(c.Dir, "log", d.Name()+".log")
	d.Args = []string{"nbd", "serve", image, "--listen", "tcp://" + addr, "--conf", c.Conf}
	return d
}

// s3Spec is the spec of S3 gateway id: it serves HTTP at addr and finds
// the monitors through the cluster's configuration file. Its creation
// (Config.Create) is the cluster's side of it, such as its first user.
func s3Spec(c *Cluster, id, addr string) Daemon {
	d := Daemon{Kind: KindS3, ID: id, Addr: addr}
	d.Log = filepath.Join(c.Dir, "log", d.Name()+".log")
	d.Args = []string{"s3", "serve", "--addr", addr, "--conf", c.Conf}
	return d
}

// mdsSpec is the spec of MDS daemon id: it listens for clients at addr
// and finds the monitors through the cluster's configuration file.
func mdsSpec(c *Cluster, id, addr, metricsAddr string) Daemon {
	d := Daemon{Kind: KindMDS, ID: id, Addr: addr, MetricsAddr: metricsAddr}
	d.Data = filepath.Join(c.Dir, d.Name())
	d.Log = filepath.Join(c.Dir, "log", d.Name()+".log")
	d.Args = []string{"mds", "run", "--id", id, "--data", d.Data, "--listen", addr, "--metrics-addr", metricsAddr, "--conf", c.Conf}
	return d
}

// osdSpec is the spec of OSD id: it listens at addr and finds the
// monitors through the cluster's configuration file.
func osdSpec(c *Cluster, id int, addr, metricsAddr string) Daemon {
	d := Daemon{Kind: KindOSD, ID: strconv.Itoa(id), Addr: addr, MetricsAddr: metricsAddr}
	d.Data = filepath.Join(c.Dir, d.Name())
	d.Log = filepath.Join(c.Dir, "log", d.Name()+".log")
	d.Args = []string{"osd", "run", "--id", d.ID, "--data", d.Data, "--listen", addr, "--metrics-addr", metricsAddr, "--conf", c.Conf}
	return d
}

// monSpec is the spec of monitor id.
func monSpec(dir, id, addr, metricsAddr string) Daemon {
	d := Daemon{Kind: KindMon, ID: id, Addr: addr, MetricsAddr: metricsAddr}
	d.Data = filepath.Join(dir, d.Name())
	d.Log = filepath.Join(dir, "log", d.Name()+".log")
	d.Args = []string{"mon", "run", "--id", id, "--data", d.Data, "--metrics-addr", metricsAddr}
	return d
}

// pickPorts returns n addresses host:port with ports from [from,
// from+PortRange) that free reports free, lowest first.
func pickPorts(host string, from, n int, free func(hostport string) bool) ([]string, error) {
	var out []string
	for p := from; p < from+PortRange && len(out) < n; p++ {
		a := net.JoinHostPort(host, strconv.Itoa(p))
		if free(a) {
			out = append(out, a)
		}
	}
	if len(out) < n {
		return nil, fmt.Errorf("%w: found %d of %d in %s ports %d-%d", ErrNoPorts, len(out), n, host, from, from+PortRange-1)
	}
	return out, nil
}

// ErrNoPorts is returned when too few free ports are found.
var ErrNoPorts = errors.New("launcher: not enough free ports")

// PortFree reports whether a TCP listener can be opened at hostport now:
// the default of [Config.Free].
func PortFree(hostport string) bool {
	l, err := net.Listen("tcp", hostport)
	if err != nil {
		return false
	}
	l.Close()
	return true
}
