module github.com/cuttlestore/cuttle

go 1.26
