package launcher

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// busy returns a Free function that reports the given ports taken.
func busy(taken ...string) func(string) bool {
	return func(a string) bool { return !slices.Contains(taken, a) }
}

func TestPlanDefaults(t *testing.T) {
	dir := t.TempDir()
	c, err := Plan(Options{Dir: dir}, "fsid-1", busy())
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	want := &Cluster{
		Version: recordVersion, FSID: "fsid-1", Auth: "cephx", Dir: dir,
		Conf: conf, Keyring: filepath.Join(dir, "admin.keyring"),
		Daemons: []Daemon{{
			Kind: KindMon, ID: "a", Addr: "127.0.0.1:7500", MetricsAddr: "127.0.0.1:7600",
			Data: filepath.Join(dir, "mon.a"), Log: filepath.Join(dir, "log", "mon.a.log"),
			Args: []string{"mon", "run", "--id", "a", "--data", filepath.Join(dir, "mon.a"), "--metrics-addr", "127.0.0.1:7600"},
		}},
		Pending: []string{"setup", "osd.0", "osd.1", "osd.2"},
	}
	for i, id := range []string{"0", "1", "2"} {
		data := filepath.Join(dir, "osd."+id)
		addr, metrics := fmt.Sprintf("127.0.0.1:%d", 7501+i), fmt.Sprintf("127.0.0.1:%d", 7601+i)
		want.Daemons = append(want.Daemons, Daemon{
			Kind: KindOSD, ID: id, Addr: addr, MetricsAddr: metrics,
			Data: data, Log: filepath.Join(dir, "log", "osd."+id+".log"),
			Args: []string{"osd", "run", "--id", id, "--data", data, "--listen", addr, "--metrics-addr", metrics, "--conf", conf},
		})
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Plan =\n%+v\nwant\n%+v", c, want)
	}
	if c.MonHost() != "a=127.0.0.1:7500" {
		t.Errorf("MonHost = %q", c.MonHost())
	}
	if len(c.Mons()) != 1 || len(c.OSDs()) != 3 {
		t.Errorf("Mons %v, OSDs %v", c.Mons(), c.OSDs())
	}
}

// NoOSDs makes a cluster of monitors only.
func TestPlanNoOSDs(t *testing.T) {
	c, err := Plan(Options{Dir: t.TempDir(), OSDs: NoOSDs}, "f", busy())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Daemons) != 1 || !reflect.DeepEqual(c.Pending, []string{"setup"}) {
		t.Errorf("daemons %v, pending %v", c.Daemons, c.Pending)
	}
}

// Ports in use are skipped, for monitors and metrics alike.
func TestPlanSkipsBusyPorts(t *testing.T) {
	c, err := Plan(Options{Dir: t.TempDir(), Mons: 3, OSDs: 2, BasePort: 20000},
		"f", busy("127.0.0.1:20001", "127.0.0.1:20100", "127.0.0.1:20102"))
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, d := range c.Daemons {
		got = append(got, [2]string{d.Name() + " " + d.Addr, d.MetricsAddr})
	}
	want := [][2]string{
		{"mon.a 127.0.0.1:20000", "127.0.0.1:20101"},
		{"mon.b 127.0.0.1:20002", "127.0.0.1:20103"},
		{"mon.c 127.0.0.1:20003", "127.0.0.1:20104"},
		{"osd.0 127.0.0.1:20004", "127.0.0.1:20105"},
		{"osd.1 127.0.0.1:20005", "127.0.0.1:20106"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if c.MonHost() != "a=127.0.0.1:20000,b=127.0.0.1:20002,c=127.0.0.1:20003" {
		t.Errorf("MonHost = %q", c.MonHost())
	}
}

// MDS daemons come after the OSDs, named a, b, ..., made once the
// monitors run, and run with the cluster's configuration file.
func TestPlanMDSs(t *testing.T) {
	dir := t.TempDir()
	c, err := Plan(Options{Dir: dir, OSDs: 1, MDSs: 2, BasePort: 20000}, "f", busy())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range c.Daemons {
		names = append(names, d.Name()+" "+d.Addr)
	}
	if want := []string{"mon.a 127.0.0.1:20000", "osd.0 127.0.0.1:20001", "mds.a 127.0.0.1:20002", "mds.b 127.0.0.1:20003"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("daemons %v, want %v", names, want)
	}
	if !reflect.DeepEqual(c.Pending, []string{"setup", "osd.0", "mds.a", "mds.b"}) {
		t.Errorf("pending %v", c.Pending)
	}
	d := c.MDSs()[1]
	want := []string{"mds", "run", "--id", "b", "--data", filepath.Join(dir, "mds.b"), "--listen", "127.0.0.1:20003",
		"--metrics-addr", "127.0.0.1:20103", "--conf", filepath.Join(dir, "cuttle.conf")}
	if !reflect.DeepEqual(d.Args, want) {
		t.Errorf("args %v, want %v", d.Args, want)
	}
	if _, err := Plan(Options{Dir: dir, MDSs: MaxMDSs + 1}, "f", busy()); err == nil {
		t.Error("too many MDS daemons accepted")
	}
}

// The S3 gateway comes last, on the next daemon port, with no metrics
// port and no data directory, and is created (its user) like the others
// once the monitors run.
func TestPlanS3(t *testing.T) {
	dir := t.TempDir()
	c, err := Plan(Options{Dir: dir, OSDs: 1, MDSs: 1, S3: true, BasePort: 20000}, "f", busy())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range c.Daemons {
		names = append(names, d.Name()+" "+d.Addr+" "+d.MetricsAddr)
	}
	want := []string{"mon.a 127.0.0.1:20000 127.0.0.1:20100", "osd.0 127.0.0.1:20001 127.0.0.1:20101",
		"mds.a 127.0.0.1:20002 127.0.0.1:20102", "s3.a 127.0.0.1:20003 "}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("daemons %v, want %v", names, want)
	}
	if !reflect.DeepEqual(c.Pending, []string{"setup", "osd.0", "mds.a", "s3.a"}) {
		t.Errorf("pending %v", c.Pending)
	}
	gws := c.S3Gateways()
	if len(gws) != 1 {
		t.Fatalf("gateways %v", gws)
	}
	d := gws[0]
	if args := []string{"s3", "serve", "--addr", "127.0.0.1:20003", "--conf", filepath.Join(dir, "cuttle.conf")}; !reflect.DeepEqual(d.Args, args) {
		t.Errorf("args %v, want %v", d.Args, args)
	}
	if d.Data != "" || d.Log != filepath.Join(dir, "log", "s3.a.log") {
		t.Errorf("data %q, log %q", d.Data, d.Log)
	}
	// The record keeps it.
	if err := saveRecord(c); err != nil {
		t.Fatal(err)
	}
	back, err := loadRecord(dir)
	if err != nil || !reflect.DeepEqual(back.S3Gateways(), gws) {
		t.Errorf("record: %v, %+v", err, back)
	}
	// Without S3, no gateway and no port for it.
	c, err = Plan(Options{Dir: dir, OSDs: 1, BasePort: 20000}, "f", busy())
	if err != nil || len(c.S3Gateways()) != 0 || len(c.Daemons) != 2 {
		t.Errorf("no S3: %v %+v", err, c)
	}
}

// The NBD server comes after the gateway, exporting the image it is
// given over TCP, with no metrics port and no data directory.
func TestPlanNBD(t *testing.T) {
	dir := t.TempDir()
	c, err := Plan(Options{Dir: dir, OSDs: 1, S3: true, NBD: "rbd/disk0", BasePort: 20000}, "f", busy("127.0.0.1:20003"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range c.Daemons {
		names = append(names, d.Name()+" "+d.Addr+" "+d.MetricsAddr)
	}
	want := []string{"mon.a 127.0.0.1:20000 127.0.0.1:20100", "osd.0 127.0.0.1:20001 127.0.0.1:20101",
		"s3.a 127.0.0.1:20002 ", "nbd.a 127.0.0.1:20004 "}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("daemons %v, want %v", names, want)
	}
	if !reflect.DeepEqual(c.Pending, []string{"setup", "osd.0", "s3.a", "nbd.a"}) {
		t.Errorf("pending %v", c.Pending)
	}
	d := c.NBDServers()[0]
	if args := []string{"nbd", "serve", "rbd/disk0", "--listen", "tcp://127.0.0.1:20004", "--conf", filepath.Join(dir, "cuttle.conf")}; !reflect.DeepEqual(d.Args, args) {
		t.Errorf("args %v, want %v", d.Args, args)
	}
	if d.Data != "" || !d.Kind.FrontEnd() || KindOSD.FrontEnd() || KindMDS.FrontEnd() {
		t.Errorf("nbd.a: %+v", d)
	}
	for _, bad := range []string{"disk0", "/disk0", "rbd/", "rbd/a/b", "rbd/disk0@snap"} {
		if _, err := Plan(Options{Dir: dir, OSDs: 1, NBD: bad}, "f", busy()); err == nil {
			t.Errorf("NBD image %q accepted", bad)
		}
	}
}

func TestPlanRejects(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{
		{},
		{Dir: "relative"},
		{Dir: dir, Mons: 2},
		{Dir: dir, Mons: 7},
		{Dir: dir, OSDs: -2},
		{Dir: dir, OSDs: MaxOSDs + 1},
		{Dir: dir, BasePort: 80},
		{Dir: dir, BasePort: 65400},
		{Dir: dir, Host: "localhost"},
	} {
		if c, err := Plan(o, "f", busy()); err == nil {
			t.Errorf("Plan(%+v) = %+v, want an error", o, c)
		}
	}
	_, err := Plan(Options{Dir: dir}, "f", func(string) bool { return false })
	if !errors.Is(err, ErrNoPorts) {
		t.Errorf("every port busy: %v, want ErrNoPorts", err)
	}
}

func TestPickPortsStaysInRange(t *testing.T) {
	var tried []string
	free := func(a string) bool { tried = append(tried, a); return len(tried) > PortRange-2 }
	got, err := pickPorts("127.0.0.1", 30000, 2, free)
	if err != nil || !reflect.DeepEqual(got, []string{"127.0.0.1:30098", "127.0.0.1:30099"}) {
		t.Fatalf("pickPorts = %v, %v", got, err)
	}
	tried = nil
	if _, err := pickPorts("127.0.0.1", 30000, 3, free); !errors.Is(err, ErrNoPorts) || len(tried) != PortRange {
		t.Fatalf("three ports: %v after %d tries", err, len(tried))
	}
}

func TestPortFree(t *testing.T) {
	// Port 0 asks the kernel for any port: always free.
	if !PortFree("127.0.0.1:0") {
		t.Error("127.0.0.1:0 is not free")
	}
	if PortFree("256.0.0.1:1") {
		t.Error("a bad address is free")
	}
}

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c, err := Plan(Options{Dir: dir, Mons: 5}, "fsid", busy())
	if err != nil {
		t.Fatal(err)
	}
	if err := saveRecord(c); err != nil {
		t.Fatal(err)
	}
	got, err := loadRecord(dir)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("load = %+v, %v; want %+v", got, err, c)
	}
	if _, err := loadRecord(t.TempDir()); !errors.Is(err, ErrNoCluster) {
		t.Errorf("empty directory: %v, want ErrNoCluster", err)
	}
}

func TestRecordRejects(t *testing.T) {
	for _, text := range []string{
		``,
		`{"version":2,"daemons":[{"kind":"mon","id":"a","log":"/l","args":["x"]}]}`,
		`{"version":1}`,
		`{"version":1,"daemons":[{"kind":"mon","id":"a","log":"rel","args":["x"]}]}`,
		`{"version":1,"daemons":[{"kind":"mon","id":"../a","log":"/l","args":["x"]}]}`,
		`{"version":1,"daemons":[{"kind":"mon","id":"a","log":"/l","args":["x"]},{"kind":"mon","id":"a","log":"/l","args":["x"]}]}`,
	} {
		if c, err := parseRecord("cluster.json", []byte(text)); err == nil {
			t.Errorf("parseRecord(%s) = %+v, want an error", text, c)
		}
	}
}

func TestStopTiers(t *testing.T) {
	ds := []Daemon{{Kind: KindMon, ID: "a"}, {Kind: "osd", ID: "0"}, {Kind: KindMon, ID: "b"}, {Kind: "osd", ID: "1"}, {Kind: KindMDS, ID: "a"},
		{Kind: KindS3, ID: "a"}, {Kind: KindNBD, ID: "a"}}
	got := stopTiers(ds)
	want := [][]Daemon{{ds[4], ds[5], ds[6]}, {ds[1], ds[3]}, {ds[0], ds[2]}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stopTiers = %v, want %v", got, want)
	}
	if got := stopTiers(ds[:1]); len(got) != 1 {
		t.Errorf("monitors only: %v", got)
	}
}
