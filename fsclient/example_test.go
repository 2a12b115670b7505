package fsclient_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/rados"
)

// Mount a file system through a rados connection, write a file and read
// its size back. (Not run: it needs a cluster with an MDS.)
func ExampleMount() {
	ctx := context.Background()
	conn, err := rados.ConnectConf(ctx, "/etc/cuttle/cuttle.conf")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fsys, err := fsclient.Mount(ctx, conn, "cephfs", fsclient.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fsys.Close(ctx)
	if err := fsys.Mkdir(ctx, "/logs", 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		fmt.Println(err)
		return
	}
	f, err := fsys.OpenFile(ctx, "/logs/today", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := f.Write(ctx, []byte("hello\n")); err != nil {
		fmt.Println(err)
	}
	if err := f.Close(ctx); err != nil {
		fmt.Println(err)
	}
	st, err := fsys.Stat(ctx, "/logs/today")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Size)
}
