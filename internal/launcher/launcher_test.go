package launcher

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeDaemonEnv makes the test binary act as a daemon: it listens on the
// address after --metrics-addr (a gateway, which has none: after --addr)
// and behaves as the file "mode" in the
// directory after --data says: "term" exits on SIGTERM, "stubborn"
// ignores SIGTERM, "crash" exits at once with status 1.
const fakeDaemonEnv = "CUTTLE_LAUNCHER_TEST_DAEMON"

func TestMain(m *testing.M) {
	if os.Getenv(fakeDaemonEnv) == "1" {
		os.Exit(fakeDaemon(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeDaemon(args []string) int {
	flag := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	var mode []byte
	if data := flag("--data"); data != "" {
		mode, _ = os.ReadFile(filepath.Join(data, "mode"))
		mode = []byte(strings.TrimSpace(string(mode)))
	}
	switch string(mode) {
	case "crash":
		fmt.Fprintln(os.Stderr, "boom: the fake daemon crashed")
		return 1
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if string(mode) == "stubborn" {
		ctx = context.Background() // wait for SIGKILL
	}
	addr := flag("--metrics-addr")
	if addr == "" {
		addr = flag("--addr")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	fmt.Fprintln(os.Stderr, "fake daemon listening on", l.Addr())
	<-ctx.Done()
	return 0
}

// testLauncher is a Launcher whose daemons are fake daemons, each created
// in the mode modes names (default "term"), and ready once every one
// accepts connections.
type testLauncher struct {
	*Launcher
	dir     string
	base    int
	osds    int      // Options.OSDs of up
	started []string // Events.Started, in order
	created []string // Events.Created, in order
}

func newTestLauncher(t *testing.T, modes map[string]string) *testLauncher {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tl := &testLauncher{dir: filepath.Join(t.TempDir(), "cluster"), base: 20000 + rand.IntN(40)*250, osds: NoOSDs}
	l, err := New(Config{
		Exe: exe,
		Env: append(os.Environ(), fakeDaemonEnv+"=1"),
		Create: func(_ context.Context, c *Cluster, d Daemon) error {
			if d.Data == "" {
				return nil
			}
			if err := os.MkdirAll(d.Data, 0o700); err != nil {
				return err
			}
			mode := modes[d.Name()]
			if mode == "" {
				mode = "term"
			}
			return os.WriteFile(filepath.Join(d.Data, "mode"), []byte(mode), 0o600)
		},
		Probe: func(ctx context.Context, c *Cluster) error {
			for _, d := range c.Daemons {
				if err := answers(ctx, d); err != nil {
					return err
				}
			}
			return nil
		},
		Events: Events{
			Started: func(d Daemon, _ int) { tl.started = append(tl.started, d.Name()) },
			Created: func(d Daemon) { tl.created = append(tl.created, d.Name()) },
		},
		StopTimeout:  5 * time.Second,
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	tl.Launcher = l
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(tl.dir, recordFile)); err == nil {
			if _, err := l.Down(context.Background(), tl.dir); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return tl
}

func (tl *testLauncher) up(t *testing.T, mons int) (*Cluster, []Status) {
	t.Helper()
	tl.started = nil
	c, st, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, Mons: mons, OSDs: tl.osds, BasePort: tl.base}, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

func (tl *testLauncher) status(t *testing.T) map[string]Status {
	t.Helper()
	_, st, err := tl.Status(tl.dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Status{}
	for _, s := range st {
		out[s.Name] = s
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// Up starts every daemon in a session of its own with a pid file; a
// daemon killed with SIGKILL is the only one the next Up starts; Down
// stops them all with SIGTERM.
func TestUpRestartDown(t *testing.T) {
	tl := newTestLauncher(t, nil)
	c, st := tl.up(t, 3)
	if len(st) != 3 || !slices.Equal(tl.started, []string{"mon.a", "mon.b", "mon.c"}) {
		t.Fatalf("up: %+v, started %v", st, tl.started)
	}
	for _, s := range st {
		if s.State != Running || s.PID == 0 {
			t.Fatalf("after up: %+v", s)
		}
		if pgid, err := syscall.Getpgid(s.PID); err != nil || pgid != s.PID {
			t.Errorf("%s: process group %d, %v; want its own (%d)", s.Name, pgid, err, s.PID)
		}
		if _, err := os.Stat(pidPath(c.Dir, s.Daemon)); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
	before := tl.status(t)

	if err := syscall.Kill(before["mon.b"].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "mon.b to be stopped", func() bool { return tl.status(t)["mon.b"].State == Stopped })

	tl.osds = 0
	tl.up(t, 0)
	if !slices.Equal(tl.started, []string{"mon.b"}) {
		t.Fatalf("second up started %v, want only mon.b", tl.started)
	}
	after := tl.status(t)
	for _, name := range []string{"mon.a", "mon.c"} {
		if after[name].PID != before[name].PID {
			t.Errorf("%s restarted: pid %d, was %d", name, after[name].PID, before[name].PID)
		}
	}
	if b := after["mon.b"]; b.State != Running || b.PID == before["mon.b"].PID {
		t.Errorf("mon.b after up: %+v", b)
	}

	stops, err := tl.Down(context.Background(), tl.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stops {
		if s.Result != "stopped" || s.PID != after[s.Name].PID {
			t.Errorf("down: %+v", s)
		}
	}
	for name, s := range tl.status(t) {
		if s.State != Stopped {
			t.Errorf("%s after down: %+v", name, s)
		}
		if _, err := os.Stat(pidPath(c.Dir, s.Daemon)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: pid file left: %v", name, err)
		}
	}
	// Down again finds nothing to stop.
	stops, err = tl.Down(context.Background(), tl.dir)
	if err != nil || len(stops) != 3 || stops[0].Result != "not running" {
		t.Errorf("second down: %+v, %v", stops, err)
	}
	// Logs keep every run.
	b, _ := os.ReadFile(c.Daemons[1].Log)
	if n := strings.Count(string(b), "--- cuttle cluster up: starting mon.b"); n != 2 {
		t.Errorf("mon.b's log has %d starts, want 2:\n%s", n, b)
	}
}

// A daemon that ignores SIGTERM is killed after StopTimeout.
func TestDownKillsStubbornDaemon(t *testing.T) {
	tl := newTestLauncher(t, map[string]string{"mon.a": "stubborn"})
	tl.cfg.StopTimeout = 200 * time.Millisecond
	tl.up(t, 1)
	stops, err := tl.Down(context.Background(), tl.dir)
	if err != nil || len(stops) != 1 || stops[0].Result != "killed" {
		t.Fatalf("down: %+v, %v", stops, err)
	}
	if s := tl.status(t)["mon.a"]; s.State != Stopped {
		t.Errorf("after down: %+v", s)
	}
}

// A pid file whose pid now belongs to another process (another start
// time) is stale: Down leaves that process alone and Status says stopped.
func TestDownLeavesReusedPID(t *testing.T) {
	tl := newTestLauncher(t, nil)
	c, st := tl.up(t, 1)
	if _, err := tl.Down(context.Background(), tl.dir); err != nil {
		t.Fatal(err)
	}
	// An unrelated process, as if the pid had been reused.
	other := exec.Command(tl.cfg.Exe)
	other.Env = append(os.Environ(), fakeDaemonEnv+"=1")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- other.Wait() }()
	t.Cleanup(func() { other.Process.Kill(); <-exited })
	id, err := identify(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if id.Start == 0 {
		t.Skip("no process start times on this system")
	}
	id.Start-- // the daemon that had this pid started earlier
	if err := os.WriteFile(pidPath(c.Dir, st[0].Daemon), id.marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := tl.status(t)["mon.a"]; s.State != Stopped {
		t.Errorf("status with a reused pid: %+v", s)
	}
	stops, err := tl.Down(context.Background(), tl.dir)
	if err != nil || stops[0].Result != "not running" {
		t.Errorf("down with a reused pid: %+v, %v", stops, err)
	}
	select {
	case err := <-exited:
		t.Fatalf("down signalled the unrelated process: %v", err)
	default:
	}
}

// A daemon that exits before the cluster is ready fails Up at once, with
// the end of its log; the cluster's record stays, so up can be retried.
func TestUpReportsDaemonExit(t *testing.T) {
	tl := newTestLauncher(t, map[string]string{"mon.a": "crash"})
	start := time.Now()
	_, _, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, BasePort: tl.base}, Wait: 30 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "mon.a exited") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("up with a crashing daemon: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("up took %v to notice", d)
	}
	if _, _, err := tl.Status(tl.dir); err != nil {
		t.Errorf("status after a failed start: %v", err)
	}
}

func TestUpRefusesForeignDirectory(t *testing.T) {
	tl := newTestLauncher(t, nil)
	if err := os.MkdirAll(tl.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(tl.dir, "notes.txt")
	if err := os.WriteFile(stray, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, BasePort: tl.base}})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("up in a foreign directory: %v", err)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("the stray file: %v", err)
	}
}

// A cluster that cannot be created leaves no directory behind when Up
// made it.
func TestUpCleansFailedCreate(t *testing.T) {
	tl := newTestLauncher(t, nil)
	tl.cfg.Create = func(context.Context, *Cluster, Daemon) error { return errors.New("disk full") }
	_, _, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, BasePort: tl.base}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("up: %v", err)
	}
	if _, err := os.Stat(tl.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory left after a failed create: %v", err)
	}
}

func TestUpRefusesOtherMonCount(t *testing.T) {
	tl := newTestLauncher(t, nil)
	tl.up(t, 1)
	_, _, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, Mons: 3}})
	if err == nil || !strings.Contains(err.Error(), "1 monitor(s), not 3") {
		t.Fatalf("up --mons 3 on a 1-monitor cluster: %v", err)
	}
}

// A new cluster's OSDs are created once its monitors run and Setup has
// run, then started; a creation that fails half-way leaves its pending
// steps in the record, and the next Up resumes them without redoing
// what was done.
func TestUpCreatesOSDsOnceMonitorsRun(t *testing.T) {
	tl := newTestLauncher(t, nil)
	tl.osds = 3
	create := tl.cfg.Create
	var setups int
	failOSD1 := true
	tl.cfg.Setup = func(ctx context.Context, c *Cluster) error {
		setups++
		return monsAnswer(ctx, c)
	}
	tl.cfg.Create = func(ctx context.Context, c *Cluster, d Daemon) error {
		if d.Kind == KindOSD {
			if err := monsAnswer(ctx, c); err != nil {
				return fmt.Errorf("%s created before the monitors run: %w", d.Name(), err)
			}
			if d.ID == "1" && failOSD1 {
				failOSD1 = false
				return errors.New("no key for osd.1")
			}
		}
		return create(ctx, c, d)
	}
	_, _, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, OSDs: 3, BasePort: tl.base}, Wait: 30 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "no key for osd.1") {
		t.Fatalf("up with a failing OSD creation: %v", err)
	}
	c, err := loadRecord(tl.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Pending, []string{"osd.1", "osd.2"}) || setups != 1 {
		t.Fatalf("pending after the failure: %v, %d setups", c.Pending, setups)
	}
	if !slices.Equal(tl.created, []string{"mon.a", "osd.0"}) || !slices.Equal(tl.started, []string{"mon.a"}) {
		t.Fatalf("created %v, started %v", tl.created, tl.started)
	}
	// The next up resumes: mon.a still runs, osd.1 and osd.2 are made,
	// and every OSD starts.
	tl.created = nil
	_, st := tl.up(t, 0)
	if !slices.Equal(tl.created, []string{"osd.1", "osd.2"}) || setups != 1 {
		t.Fatalf("second up created %v, %d setups", tl.created, setups)
	}
	if !slices.Equal(tl.started, []string{"osd.0", "osd.1", "osd.2"}) || len(st) != 4 {
		t.Fatalf("second up started %v: %+v", tl.started, st)
	}
	if c, err := loadRecord(tl.dir); err != nil || len(c.Pending) != 0 {
		t.Fatalf("record after the second up: %+v, %v", c, err)
	}
	if _, _, err := tl.Up(context.Background(), UpOptions{Options: Options{Dir: tl.dir, OSDs: 5}}); err == nil ||
		!strings.Contains(err.Error(), "3 OSD(s), not 5") {
		t.Fatalf("up --osds 5 on a 3-OSD cluster: %v", err)
	}
}

// answers reports whether fake daemon d accepts connections.
func answers(ctx context.Context, d Daemon) error {
	addr := d.MetricsAddr
	if addr == "" {
		addr = d.Addr
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Front ends (the S3 gateway) start only once the other daemons are up
// and Prepare has run, on every Up; a failing Prepare keeps them from
// starting, and the next Up tries again.
func TestUpStartsFrontEndsLast(t *testing.T) {
	tl := newTestLauncher(t, nil)
	var prepares int
	failPrepare := true
	tl.cfg.Prepare = func(ctx context.Context, c *Cluster) error {
		prepares++ // the gateway is down at the first two

		for _, d := range c.Daemons {
			err := answers(ctx, d)
			if d.Kind.FrontEnd() && err == nil && prepares <= 2 {
				return fmt.Errorf("%s runs before Prepare", d.Name())
			}
			if !d.Kind.FrontEnd() && err != nil {
				return fmt.Errorf("%s does not run at Prepare: %w", d.Name(), err)
			}
		}
		if failPrepare {
			failPrepare = false
			return errors.New("no user yet")
		}
		return nil
	}
	var waits [][]string
	tl.cfg.Events.Waiting = func(ds []Daemon, _ time.Duration) {
		var n []string
		for _, d := range ds {
			n = append(n, d.Name())
		}
		waits = append(waits, n)
	}
	o := UpOptions{Options: Options{Dir: tl.dir, OSDs: 1, S3: true, BasePort: tl.base}, Wait: 30 * time.Second}
	if _, _, err := tl.Up(context.Background(), o); err == nil || !strings.Contains(err.Error(), "prepare for s3.a: no user yet") {
		t.Fatalf("up with a failing Prepare: %v", err)
	}
	if st := tl.status(t); st["s3.a"].State != Stopped || st["osd.0"].State != Running {
		t.Fatalf("after a failing Prepare: %+v", st)
	}
	tl.started = nil
	if _, _, err := tl.Up(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tl.started, []string{"s3.a"}) || prepares != 2 {
		t.Fatalf("second up started %v after %d prepares", tl.started, prepares)
	}
	if want := [][]string{{"mon.a"}, {"mon.a", "osd.0"}, {"mon.a", "osd.0"}, {"s3.a"}}; !reflect.DeepEqual(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	// Everything runs: Prepare is still called, nothing is started.
	tl.started = nil
	if _, st, err := tl.Up(context.Background(), o); err != nil || len(tl.started) != 0 || prepares != 3 || len(st) != 3 {
		t.Fatalf("third up: %v, started %v, %d prepares, %+v", err, tl.started, prepares, st)
	}
}

// monsAnswer reports whether every monitor of c accepts connections.
func monsAnswer(ctx context.Context, c *Cluster) error {
	for _, d := range c.Mons() {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", d.MetricsAddr)
		if err != nil {
			return err
		}
		conn.Close()
	}
	return nil
}

func TestStatusWithoutCluster(t *testing.T) {
	tl := newTestLauncher(t, nil)
	if _, _, err := tl.Status(tl.dir); !errors.Is(err, ErrNoCluster) {
		t.Errorf("status: %v, want ErrNoCluster", err)
	}
	if _, err := tl.Down(context.Background(), tl.dir); !errors.Is(err, ErrNoCluster) {
		t.Errorf("down: %v, want ErrNoCluster", err)
	}
}
