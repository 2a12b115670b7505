package daemoncmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/rbd"
)

// The block image a local cluster exports over NBD (--nbd): a sparse
// image in the cluster's pool, exported under its own name (what cuttle
// nbd serve names an export by default).
const (
	nbdPool      = clusterPool
	nbdImage     = "disk0"
	nbdImageSize = 10 << 30
)

// nbdReport is the export cluster up prints.
type nbdReport struct {
	// URI is the export as NBD tools take it: nbd://HOST:PORT/NAME.
	URI   string `json:"uri"`
	Image string `json:"image"`
	Size  uint64 `json:"size"`
}

// ensureNBDImage makes the exported image unless it exists (of whatever
// size: one resized by hand is kept).
func ensureNBDImage(ctx context.Context, c *launcher.Cluster) error {
	cf := &clusterconn.Flags{Conf: c.Conf, Name: "client.admin", Timeout: time.Minute}
	conn, err := cf.Dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	p, err := rbd.NewPool(conn, nbdPool, rbd.Options{})
	if err != nil {
		return err
	}
	err = p.Create(ctx, nbdImage, nbdImageSize, rbd.CreateOptions{})
	if err != nil && !errors.Is(err, rbd.ErrExists) {
		return fmt.Errorf("the NBD export's image %s/%s: %w", nbdPool, nbdImage, err)
	}
	return nil
}

// nbdMagic is what an NBD server sends first (the newstyle handshake).
const nbdMagic = "NBDMAGIC"

// nbdAnswers checks that the NBD server d answers: it opens the
// handshake and hangs up.
func nbdAnswers(ctx context.Context, d launcher.Daemon) error {
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", d.Addr)
	if err != nil {
		return fmt.Errorf("%s does not answer yet: %w", d.Name(), err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetReadDeadline(dl)
	}
	b := make([]byte, len(nbdMagic))
	if _, err := io.ReadFull(conn, b); err != nil {
		return fmt.Errorf("%s does not answer yet: %w", d.Name(), err)
	}
	if string(b) != nbdMagic {
		return fmt.Errorf("%s at %s is not an NBD server: it said %q", d.Name(), d.Addr, b)
	}
	return nil
}

// nbdInfo is what cluster up prints about the NBD export of c, if any.
func nbdInfo(c *launcher.Cluster) *nbdReport {
	srv := c.NBDServers()
	if len(srv) == 0 {
		return nil
	}
	return &nbdReport{URI: "nbd://" + srv[0].Addr + "/" + nbdImage, Image: nbdPool + "/" + nbdImage, Size: nbdImageSize}
}

// nbdSteps is how to use the export, as cluster up prints it.
func nbdSteps(r *nbdReport) string {
	return fmt.Sprintf(`
NBD export of image %[2]s (%[3]d GiB, sparse) at %[1]s:
  nbdinfo %[1]s
  qemu-img convert -p -n -f raw -O raw DISK.img %[1]s  # write a disk image into it
  qemu-img convert -p -O qcow2 %[1]s disk0.qcow2  # copy it out
`, r.URI, r.Image, r.Size>>30)
}
