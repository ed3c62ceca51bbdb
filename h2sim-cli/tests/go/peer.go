// An HTTP/2 peer built on Go's net/http, whose HTTP/2 implementation shares
// no code with h2sim's or nghttp2's, for h2sim-cli/tests/interop_go.rs.
// Standard library only (Go 1.19, Debian's golang-go).
//
//	peer server CERT KEY
//	    Serves HTTP/2 over TLS on 127.0.0.1 (a free port, printed as
//	    "listening PORT"): GET /1k answers 1,024 octets, GET /big 307,200,
//	    POST /echo its request body. GET /stats answers the number of
//	    requests served so far over HTTP/2 ("served N").
//
//	peer client CA URL N
//	    N requests at once through one client to URL (an h2sim server whose
//	    rules answer GET /1k with 1k, POST /up with 1k and GET /big with
//	    300k): a third of each. Checks each status, protocol and body
//	    length, and that every body of a path is the same; prints "ok N"
//	    or the first problem, and exits 1 on a problem. The mix matters:
//	    Go's client reads nothing while it writes a body, so uploads with
//	    large answers waiting meet a server that stops reading while its
//	    answers wait to be written (h2sim's reads on once its writes stand
//	    still).
package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: peer server CERT KEY | peer client CA URL N")
	}
	switch os.Args[1] {
	case "server":
		server(os.Args[2], os.Args[3])
	case "client":
		n, err := strconv.Atoi(os.Args[4])
		if err != nil {
			fail("N: " + err.Error())
		}
		client(os.Args[2], os.Args[3], n)
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Println("error:", msg)
	os.Exit(1)
}

func server(cert, key string) {
	var served atomic.Int64
	mux := http.NewServeMux()
	body := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	small, big := body(1024), body(300*1024)
	count := func(r *http.Request) {
		if r.ProtoMajor == 2 {
			served.Add(1)
		}
	}
	mux.HandleFunc("/1k", func(w http.ResponseWriter, r *http.Request) {
		count(r)
		w.Write(small)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		count(r)
		w.Write(big)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		count(r)
		w.Write(got)
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "served %d", served.Load())
	})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("listening %d\n", listener.Addr().(*net.TCPAddr).Port)
	srv := &http.Server{Handler: mux}
	fail(srv.ServeTLS(listener, cert, key).Error())
}

type want struct {
	method, path string
	status, len  int
}

func client(ca, url string, n int) {
	pem, err := os.ReadFile(ca)
	if err != nil {
		fail(err.Error())
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fail("no certificate in " + ca)
	}
	transport := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
	}
	// A request that takes this long is stuck (all of them take well under
	// a second): fail rather than hang the test.
	c := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	wants := []want{
		{"GET", "/1k", 200, 1024},
		{"POST", "/up", 201, 1024},
		{"GET", "/big", 200, 300 * 1024},
	}
	upload := bytes.Repeat([]byte("u"), 100*1024)
	var mu sync.Mutex
	var problems []string
	hashes := map[string][32]byte{}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		w := wants[i%len(wants)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			problem := func(msg string) {
				mu.Lock()
				problems = append(problems, w.method+" "+w.path+": "+msg)
				mu.Unlock()
			}
			var reqBody io.Reader
			if w.method == "POST" {
				reqBody = bytes.NewReader(upload)
			}
			req, err := http.NewRequest(w.method, url+w.path, reqBody)
			if err != nil {
				problem(err.Error())
				return
			}
			resp, err := c.Do(req)
			if err != nil {
				problem(err.Error())
				return
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case err != nil:
				problem(err.Error())
			case resp.ProtoMajor != 2:
				problem("answered over " + resp.Proto)
			case resp.StatusCode != w.status:
				problem("status " + resp.Status)
			case len(got) != w.len:
				problem(fmt.Sprintf("%d octets of body, not %d", len(got), w.len))
			default:
				sum := sha256.Sum256(got)
				mu.Lock()
				if first, seen := hashes[w.path]; seen && first != sum {
					problems = append(problems, w.path+": bodies differ")
				}
				hashes[w.path] = sum
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(problems) > 0 {
		fail(fmt.Sprintf("%d of %d: %s", len(problems), n, problems[0]))
	}
	fmt.Printf("ok %d\n", n)
}
