package rados_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cuttlestore/cuttle/rados"
)

// exampleCluster starts the in-memory cluster the Examples talk to: one
// monitor (mon.a at mon-a:6789), three OSDs and a pool "data".
func exampleCluster() *cluster {
	c, err := startCluster(stderrReporter{}, clusterConfig{})
	if err != nil {
		panic(err)
	}
	return c
}

type stderrReporter struct{}

func (stderrReporter) Helper()                         {}
func (stderrReporter) Logf(format string, args ...any) {}
func (stderrReporter) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
func (stderrReporter) Fatalf(format string, args ...any) { panic(fmt.Errorf(format, args...)) }
func (stderrReporter) Fatal(args ...any)                 { panic(fmt.Errorf("%s", fmt.Sprint(args...))) }

// Connect to a cluster, write an object and read it back.
func Example() {
	cl := exampleCluster() // an in-memory cluster for the example
	defer cl.close()
	ctx := context.Background()

	conn, err := rados.Connect(ctx, rados.Config{
		Mons:    []string{"a=mon-a:6789"},
		Network: cl.net.Host("client"), // leave out to use TCP
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	io, err := conn.OpenIOContext("data")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := io.WriteFull(ctx, "greeting", []byte("hello, cuttle")); err != nil {
		fmt.Println(err)
		return
	}
	data, err := io.Read(ctx, "greeting", 0, 0)
	fmt.Printf("%s %v\n", data, err)

	_, err = io.Read(ctx, "missing", 0, 0)
	fmt.Println(errors.Is(err, rados.ErrNotFound))
	// Output:
	// hello, cuttle <nil>
	// true
}

// A compound write applies all its operations or none: here a
// compare-and-swap on an extended attribute.
func ExampleWriteOp() {
	cl := exampleCluster()
	defer cl.close()
	ctx := context.Background()
	conn, _ := rados.Connect(ctx, rados.Config{Mons: []string{"a=mon-a:6789"}, Network: cl.net.Host("client")})
	defer conn.Close()
	io, _ := conn.OpenIOContext("data")

	create := rados.NewWriteOp()
	create.Create(true)
	create.SetXattr("state", []byte("free"))
	create.SetOmap(map[string][]byte{"owner": []byte("nobody")})
	fmt.Println(io.OperateWrite(ctx, "lock", create))

	take := func(who string) error {
		w := rados.NewWriteOp()
		w.CmpXattr("state", rados.CmpEq, []byte("free"))
		w.SetXattr("state", []byte("taken"))
		w.SetOmap(map[string][]byte{"owner": []byte(who)})
		return io.OperateWrite(ctx, "lock", w)
	}
	fmt.Println(take("alice"))
	fmt.Println(errors.Is(take("bob"), rados.ErrCompareFailed))

	r := rados.NewReadOp()
	owner := r.GetOmapValsByKeys("owner")
	fmt.Println(io.OperateRead(ctx, "lock", r), string(owner.Map()["owner"]))
	// Output:
	// <nil>
	// <nil>
	// true
	// <nil> alice
}

// An asynchronous write reports when it is applied (visible on every
// replica) and when it is committed (durable on every replica).
func ExampleCompletion() {
	cl := exampleCluster()
	defer cl.close()
	ctx := context.Background()
	conn, _ := rados.Connect(ctx, rados.Config{Mons: []string{"a=mon-a:6789"}, Network: cl.net.Host("client")})
	defer conn.Close()
	io, _ := conn.OpenIOContext("data")

	comp := io.WriteFullAsync(ctx, "obj", []byte("data"))
	<-comp.Applied()
	fmt.Println("applied")
	fmt.Println("committed:", comp.Wait(ctx))
	// Output:
	// applied
	// committed: <nil>
}

// Read into a buffer of your own, reused from read to read: the client
// allocates nothing per read.
func ExampleIOContext_ReadInto() {
	cl := exampleCluster()
	defer cl.close()
	ctx := context.Background()
	conn, _ := rados.Connect(ctx, rados.Config{Mons: []string{"a=mon-a:6789"}, Network: cl.net.Host("client")})
	defer conn.Close()
	io, _ := conn.OpenIOContext("data")
	_ = io.WriteFull(ctx, "log", []byte("first line\nsecond line\n"))

	buf := make([]byte, 11)
	for off := uint64(0); ; {
		n, err := io.ReadInto(ctx, "log", off, buf)
		if err != nil || n == 0 {
			break
		}
		fmt.Printf("%q\n", buf[:n])
		off += uint64(n)
	}
	// Output:
	// "first line\n"
	// "second line"
	// "\n"
}

// Read without a copy: the Buffer holds the reply as it arrived, and
// Release hands its memory back to the client for later replies.
func ExampleIOContext_ReadBuffer() {
	cl := exampleCluster()
	defer cl.close()
	ctx := context.Background()
	conn, _ := rados.Connect(ctx, rados.Config{Mons: []string{"a=mon-a:6789"}, Network: cl.net.Host("client")})
	defer conn.Close()
	io, _ := conn.OpenIOContext("data")
	_ = io.WriteFull(ctx, "greeting", []byte("hello, world"))

	b, err := io.ReadBuffer(ctx, "greeting", 7, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", b.Data)
	b.Release() // b.Data must not be used after this
	// Output:
	// "world"
}

// List the objects of a pool, PG by PG; a Cursor resumes a listing.
func ExampleIOContext_Objects() {
	cl := exampleCluster()
	defer cl.close()
	ctx := context.Background()
	conn, _ := rados.Connect(ctx, rados.Config{Mons: []string{"a=mon-a:6789"}, Network: cl.net.Host("client")})
	defer conn.Close()
	io, _ := conn.OpenIOContext("data")
	for _, name := range []string{"c", "a", "b"} {
		_ = io.WriteFull(ctx, name, nil)
	}

	var names []string
	for e, err := range io.Objects(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		names = append(names, e.Name)
	}
	slices.Sort(names) // listings come in hash order
	fmt.Println(names)
	// Output: [a b c]
}

// Create a pool through the monitors and use it at once.
func ExampleConn_CreatePool() {
	cl := exampleCluster()
	defer cl.close()
	ctx := context.Background()
	conn, _ := rados.Connect(ctx, rados.Config{Mons: []string{"a=mon-a:6789"}, Network: cl.net.Host("client")})
	defer conn.Close()

	if err := conn.CreatePool(ctx, "images", &rados.PoolOptions{PGNum: 16}); err != nil {
		fmt.Println(err)
		return
	}
	io, err := conn.OpenIOContext("images")
	fmt.Println(io.PoolName(), err, conn.ListPools())
	// Output: images <nil> [data images]
}
