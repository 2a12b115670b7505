package daemoncmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/internal/s3gw"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/kv"
)

// The S3 gateway a local cluster starts with (--s3): its pool (the
// gateway's default, so cuttle s3 commands find it without --pool), the
// pool's PGs, the user whose keys cluster up prints, and the region the
// gateway reports (cuttle s3 serve's default).
const (
	s3Pool   = s3gw.DefaultPool
	s3PGs    = 16
	s3User   = "admin"
	s3Region = "us-east-1"
)

// s3Report is the gateway and the user cluster up prints.
type s3Report struct {
	Endpoint  string `json:"endpoint"`
	User      string `json:"user"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	Region    string `json:"region"`
}

// ensureS3User returns the local cluster's gateway user s3User, creating
// it (with an access key) if it does not exist and giving it a key if it
// has none, so that every cluster up prints the same working keys.
func ensureS3User(ctx context.Context, c *launcher.Cluster) (meta.User, error) {
	cf := &clusterconn.Flags{Conf: c.Conf, Name: "client.admin", Timeout: time.Minute}
	conn, err := cf.Dial(ctx)
	if err != nil {
		return meta.User{}, err
	}
	defer conn.Close()
	ioctx, err := conn.OpenIOContext(s3Pool)
	if err != nil {
		return meta.User{}, fmt.Errorf("the gateway's pool %s: %w", s3Pool, err)
	}
	s := meta.NewStore(ioctx, kv.Config{}, nil)
	u, err := s.GetUser(ctx, s3User)
	if errors.Is(err, meta.ErrNoSuchUser) {
		u, err = s.CreateUser(ctx, s3User, "")
		if errors.Is(err, meta.ErrUserExists) { // made meanwhile by another up
			u, err = s.GetUser(ctx, s3User)
		}
	}
	if err != nil {
		return meta.User{}, fmt.Errorf("gateway user %s: %w", s3User, err)
	}
	if len(u.Keys) == 0 {
		k, err := s.CreateKey(ctx, s3User)
		if err != nil {
			return meta.User{}, fmt.Errorf("gateway user %s: a key: %w", s3User, err)
		}
		u.Keys = append(u.Keys, k)
	}
	return u, nil
}

// prepareFrontEnds is the launcher's Prepare: with the cluster up and
// before its front ends start, the S3 gateway's user and the NBD
// server's image.
func prepareFrontEnds(ctx context.Context, c *launcher.Cluster) error {
	if len(c.S3Gateways()) > 0 {
		if _, err := ensureS3User(ctx, c); err != nil {
			return err
		}
	}
	if len(c.NBDServers()) > 0 {
		return ensureNBDImage(ctx, c)
	}
	return nil
}

// s3Answers checks that the gateway d answers HTTP: any reply will do (an
// anonymous request is refused with 403, which is an answer).
func s3Answers(ctx context.Context, d launcher.Daemon) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.Addr+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s does not answer yet: %w", d.Name(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return nil
}

// s3Info is what cluster up prints about the gateway of c, if it has one:
// its endpoint and the user's first key, the user made if missing.
func s3Info(ctx context.Context, c *launcher.Cluster) (*s3Report, error) {
	gws := c.S3Gateways()
	if len(gws) == 0 {
		return nil, nil
	}
	u, err := ensureS3User(ctx, c)
	if err != nil {
		return nil, err
	}
	return &s3Report{Endpoint: "http://" + gws[0].Addr, User: u.Name, AccessKey: u.Keys[0].Access,
		SecretKey: u.Keys[0].Secret, Region: s3Region}, nil
}

// s3Steps is how to use the gateway, as cluster up prints it, with self
// the command that runs this binary.
func s3Steps(r *s3Report, self string) string {
	return fmt.Sprintf(`
S3 gateway at %[1]s, user %[2]s (%[6]s s3 user info %[2]s shows it again):
  export AWS_ACCESS_KEY_ID=%[3]s AWS_SECRET_ACCESS_KEY=%[4]s AWS_DEFAULT_REGION=%[5]s
  aws --endpoint-url %[1]s s3 mb s3://bucket
  aws --endpoint-url %[1]s s3 cp FILE s3://bucket/
`, r.Endpoint, r.User, r.AccessKey, r.SecretKey, r.Region, self)
}
