package cli

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cluster up exports rbd/disk0 over NBD and prints how to reach it: the
// printed nbdinfo line shows a 10 GiB export, the printed qemu-img line
// writes a disk image into it that qemu-img compare then reads back; a
// second up keeps the image (and its data) and starts nothing; down
// stops nbd.a.
func TestClusterUpNBDExport(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	for _, tool := range []string{"nbdinfo", "qemu-img"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Geteuid() != 0 {
				t.Skipf("%s is not installed (apt-get install libnbd-bin qemu-utils)", tool)
			}
			t.Fatalf("%s is not installed: make deps installs it", tool)
		}
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "nbd.a")
	out, stderr, err := cuttleProc(t, "--format", "json", "cluster", "up", "--fs=false", "--s3=false", "--dir", dir, "--base-port", base, "--osds", "1", "--osd-size", "256M")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	var rep struct {
		NBD *struct {
			URI   string `json:"uri"`
			Image string `json:"image"`
			Size  uint64 `json:"size"`
		} `json:"nbd"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.NBD == nil {
		t.Fatalf("cluster up's report has no nbd: %v\n%s", err, out)
	}
	srv := localStatus(t, dir)["nbd.a"]
	if srv.State != "running" || rep.NBD.URI != "nbd://"+srv.Addr+"/disk0" || rep.NBD.Image != "rbd/disk0" {
		t.Fatalf("nbd.a %+v, report %+v", srv, rep.NBD)
	}
	tool := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var info []struct {
		Name string `json:"export-name"`
		Size uint64 `json:"export-size"`
	}
	if err := json.Unmarshal([]byte(tool("nbdinfo", "--json", rep.NBD.URI)), &struct {
		Exports *[]struct {
			Name string `json:"export-name"`
			Size uint64 `json:"export-size"`
		} `json:"exports"`
	}{&info}); err != nil || len(info) != 1 || info[0].Name != "disk0" || info[0].Size != 10<<30 {
		t.Fatalf("nbdinfo: %+v %v", info, err)
	}
	// A small disk image with data and holes, written as printed.
	img := filepath.Join(t.TempDir(), "disk.img")
	data := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 1 << 20; i < 2<<20; i++ {
		data[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tool("qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", img, rep.NBD.URI)
	if got := tool("qemu-img", "compare", "-f", "raw", "-F", "raw", img, rep.NBD.URI); !strings.Contains(got, "identical") {
		t.Fatalf("compare: %s", got)
	}

	// Up again: the image is kept, nothing is started, the lines are
	// printed again.
	out, stderr, err = cuttleProc(t, "cluster", "up", "--dir", dir)
	if err != nil {
		t.Fatalf("second cluster up: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(out, "  nbdinfo "+rep.NBD.URI+"\n") || strings.Contains(stderr, "started ") {
		t.Errorf("second up:\n%s%s", out, stderr)
	}
	if got := tool("qemu-img", "compare", "-f", "raw", "-F", "raw", img, rep.NBD.URI); !strings.Contains(got, "identical") {
		t.Fatalf("compare after the second up: %s", got)
	}

	out, stderr, err = cuttleProc(t, "cluster", "down", "--dir", dir)
	if err != nil || !strings.Contains(out, "stopped nbd.a") {
		t.Fatalf("cluster down: %v\n%s%s", err, out, stderr)
	}
}
