package mdstore

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// Write-backs go on while the OSDs holding the fragment fail and return,
// one at a time: every acknowledged write-back is in the fragment
// afterwards, and none is refused as stale (a write resent after a lost
// reply carries the same stamp, which the guard lets through).
func TestWriteBacksAcrossOSDFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t)
		ctx := context.Background()
		s := fs.store(t, "client.mds.a", 1, 0)
		if err := s.Mkfs(ctx, fs.data, now); err != nil {
			t.Fatal(err)
		}
		const rounds, per = 30, 50
		progress := make(chan int, rounds)
		errc := make(chan error, 1)
		go func() {
			defer close(progress)
			for r := range rounds {
				u := FragUpdate{Dir: mdtypes.RootIno, Header: mdtypes.FragHeader{Version: uint64(r + 2), Files: uint64((r + 1) * per)}}
				for i := range per {
					ino := mdtypes.Ino(1<<40 + r*per + i)
					u.Set = append(u.Set, &mdtypes.Dentry{Name: fmt.Sprintf("r%02d-%02d", r, i), Version: uint64(r + 2), Inode: fileInode(ino, fs.data, uint64(r))})
				}
				if err := s.WriteBack(ctx, u); err != nil {
					errc <- fmt.Errorf("round %d: %w", r, err)
					return
				}
				progress <- r
			}
		}()
		ids := []int32{}
		for id := range fs.c.OSDs {
			ids = append(ids, id)
		}
		next := 0
		for r := range progress {
			if r%8 == 3 && next < len(ids) {
				fs.c.StopOSD(ids[next])
				fs.c.StartOSD(ids[next])
				next++
			}
		}
		select {
		case err := <-errc:
			t.Fatal(err)
		default:
		}
		if next != len(ids) {
			t.Fatalf("only %d OSDs were failed", next)
		}
		fr, err := s.ReadFrag(ctx, mdtypes.RootIno, mdtypes.RootFrag)
		if err != nil {
			t.Fatal(err)
		}
		if len(fr.Dentries) != rounds*per || fr.Header.Version != rounds+1 || fr.Stamp != (Stamp{1, rounds + 1}) {
			t.Fatalf("%d dentries, header %+v, stamp %v", len(fr.Dentries), fr.Header, fr.Stamp)
		}
	})
}
