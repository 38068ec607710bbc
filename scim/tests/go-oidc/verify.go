// verify.go - a stand-in Kubernetes API server that authenticates requests as
// kube-apiserver's OIDC authenticator does: go-oidc v2 (the library that
// authenticator is built on) discovers the issuer over TLS, keeps the JWKS for
// its Cache-Control max-age (refetching on an unknown kid only in the last 30 s
// of that), and verifies the bearer token's signature, iss, aud and exp for one
// client id. It serves HTTPS on loopback, one process for a whole test, so
// a key rotation is crossed with no verifier restart:
//
//	200 {"kind":"APIVersions",...,"user":"<username-claim>","groups":[...]}
//	401 {"kind":"Status",...,"message":"Unauthorized: <reason>"}
//
// kubectl (with allot-kube-token as its exec plugin) and curl both talk to it.
// Built offline against Debian's golang-github-coreos-go-oidc-dev
// (GO111MODULE=off, GOPATH=/usr/share/gocode); see scim/tests/oidc-rotation.sh.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"net/http"
	"os"
	"strings"

	oidc "github.com/coreos/go-oidc"
)

func main() {
	issuer := flag.String("issuer", "", "the issuer URL (--oidc-issuer-url)")
	clientID := flag.String("client-id", "", "the audience (--oidc-client-id)")
	caFile := flag.String("cacert", "", "the CA bundle (--oidc-ca-file)")
	userClaim := flag.String("username-claim", "preferred_username", "--oidc-username-claim")
	groupsClaim := flag.String("groups-claim", "groups", "--oidc-groups-claim")
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to serve on")
	certFile := flag.String("tls-cert", "", "serving certificate (kubectl sends exec credentials over TLS only)")
	keyFile := flag.String("tls-key", "", "its private key")
	flag.Parse()

	pem, err := ioutil.ReadFile(*caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify:", err)
		os.Exit(2)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		fmt.Fprintln(os.Stderr, "verify: no certificate in", *caFile)
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	ctx := oidc.ClientContext(context.Background(), client)

	provider, err := oidc.NewProvider(ctx, *issuer)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify: discovery:", err)
		os.Exit(1)
	}
	// kube-apiserver accepts RS256 unless told otherwise; allot signs ES256 by default.
	verifier := provider.Verifier(&oidc.Config{ClientID: *clientID,
		SupportedSigningAlgs: []string{oidc.RS256, oidc.ES256}})

	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		raw := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		user, groups, err := check(ctx, verifier, raw, *userClaim, *groupsClaim)
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]interface{}{"kind": "Status", "apiVersion": "v1",
				"status": "Failure", "reason": "Unauthorized", "code": 401,
				"message": "Unauthorized: " + err.Error()})
			return
		}
		json.NewEncoder(w).Encode(map[string]interface{}{"kind": "APIVersions",
			"versions": []string{"v1"}, "serverAddressByClientCIDRs": []string{},
			"user": user, "groups": groups})
	})
	fmt.Fprintln(os.Stderr, "verify: serving on", *listen)
	fmt.Fprintln(os.Stderr, http.ListenAndServeTLS(*listen, *certFile, *keyFile, nil))
	os.Exit(1)
}

// check verifies a token and reads the username and groups claims.
func check(ctx context.Context, v *oidc.IDTokenVerifier, raw, userClaim, groupsClaim string) (string, []string, error) {
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		return "", nil, err
	}
	var claims map[string]interface{}
	if err := tok.Claims(&claims); err != nil {
		return "", nil, err
	}
	user, ok := claims[userClaim].(string)
	if !ok || user == "" {
		return "", nil, fmt.Errorf("no %s claim", userClaim)
	}
	groups := []string{}
	if list, ok := claims[groupsClaim].([]interface{}); ok {
		for _, g := range list {
			if s, ok := g.(string); ok {
				groups = append(groups, s)
			}
		}
	}
	return user, groups, nil
}
