// Command etcd is etcd's server, built from its module for the tests' control
// plane (see .ci/install-control-plane.sh). The etcd repository's own main
// package lives in a module that is not meant to be required, so this calls
// the server's entry point the same way it does.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
