// Node.js's http2 and http modules as peers of h2sim
// (h2sim-cli/tests/interop_node.rs): what JavaScript mocks of network
// functions are written with.
//
//   node peer.js server CERT KEY PLAIN TLS
//       HTTP/2 with prior knowledge on PLAIN, TLS (ALPN h2 and http/1.1)
//       on TLS, both on 127.0.0.1: GET /1k answers 1,024 bytes, POST /up
//       reads the body and answers 201 with 1,024 bytes (400 unless the
//       body was 100 KiB), GET /big 300 KiB, /stats "served N"
//   node peer.js client CA BASE N MODE [AT_ONCE [PATH]]
//       N requests, AT_ONCE (50) at a time, a third each GET /1k, POST /up
//       with 100 KiB and GET /big (or PATH's alone, or POST /ok with 100
//       KiB answered 201 "ok"), each answer's status and length checked; MODE is h2 (BASE https://, the certificate
//       checked against CA), h2c (prior knowledge) or http1 (keep-alive
//       agent, 10 sockets); prints "ok N" or the failures and exits 1
'use strict';
const fs = require('fs');
const http = require('http');
const http2 = require('http2');
const https = require('https');

const WANTS = [
  { method: 'GET', path: '/1k', status: 200, length: 1024 },
  { method: 'POST', path: '/up', status: 201, length: 1024 },
  { method: 'GET', path: '/big', status: 200, length: 300 * 1024 },
];
// Asked for by PATH alone: an upload answered at once with 201 "ok".
const UPLOAD_OK = { method: 'POST', path: '/ok', status: 201, length: 2 };
const UPLOAD = Buffer.alloc(100 * 1024, 'u');

function server(cert, key, plain, tls) {
  let served = 0;
  const small = Buffer.alloc(1024, 'a');
  const big = Buffer.alloc(300 * 1024, 'b');
  const handle = (req, res) => {
    let got = 0;
    req.on('data', (chunk) => { got += chunk.length; });
    req.on('end', () => {
      const path = new URL(req.url, 'http://x').pathname;
      let status = 200;
      let body = Buffer.alloc(0);
      if (path === '/stats') {
        body = Buffer.from(`served ${served}`);
      } else {
        served += 1;
        if (path === '/1k') body = small;
        else if (path === '/big') body = big;
        else if (path === '/up') { status = got === UPLOAD.length ? 201 : 400; body = small; }
        else status = 404;
      }
      res.writeHead(status, { 'content-length': body.length });
      res.end(body);
    });
  };
  const h2c = http2.createServer({}, handle);
  const secure = http2.createSecureServer(
    { cert: fs.readFileSync(cert), key: fs.readFileSync(key), allowHTTP1: true }, handle);
  h2c.listen(plain, '127.0.0.1', () => secure.listen(tls, '127.0.0.1', () => console.log(`listening ${plain}`)));
}

// One request over HTTP/2; resolves to a failure or null.
function h2Request(session, want) {
  return new Promise((resolve) => {
    const req = session.request({ ':method': want.method, ':path': want.path }, { endStream: want.method !== 'POST' });
    let status = 0;
    let length = 0;
    req.on('response', (headers) => { status = headers[':status']; });
    req.on('data', (chunk) => { length += chunk.length; });
    req.on('end', () => resolve(status === want.status && length === want.length
      ? null : `${want.method} ${want.path}: ${status}, ${length} bytes`));
    req.on('error', (e) => resolve(`${want.method} ${want.path}: ${e.message}`));
    if (want.method === 'POST') req.end(UPLOAD);
  });
}

// One request over HTTP/1.1 with `agent`; resolves to a failure or null.
function h1Request(base, agent, ca, want) {
  return new Promise((resolve) => {
    const lib = base.startsWith('https:') ? https : http;
    const req = lib.request(base + want.path, { method: want.method, agent, ca }, (res) => {
      let length = 0;
      res.on('data', (chunk) => { length += chunk.length; });
      res.on('end', () => resolve(res.statusCode === want.status && length === want.length
        ? null : `${want.method} ${want.path}: ${res.statusCode}, ${length} bytes`));
    });
    req.on('error', (e) => resolve(`${want.method} ${want.path}: ${e.message}`));
    req.end(want.method === 'POST' ? UPLOAD : undefined);
  });
}

async function client(caFile, base, n, mode, atOnce, path) {
  const wants = path ? [...WANTS, UPLOAD_OK].filter((want) => want.path === path) : WANTS;
  const ca = fs.readFileSync(caFile);
  let send;
  let finish = () => {};
  if (mode === 'http1') {
    const lib = base.startsWith('https:') ? https : http;
    const agent = new lib.Agent({ keepAlive: true, maxSockets: 10 });
    send = (want) => h1Request(base, agent, ca, want);
    finish = () => agent.destroy();
  } else {
    const session = http2.connect(base, { ca });
    session.on('error', () => {});
    send = (want) => h2Request(session, want);
    finish = () => session.close();
  }
  const failures = [];
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const failure = await send(wants[i % wants.length]);
      if (failure) failures.push(failure);
    }
  };
  await Promise.all(Array.from({ length: atOnce }, worker));
  finish();
  if (failures.length > 0) {
    console.log(`${failures.length} failed, the first: ${failures.slice(0, 5).join('; ')}`);
    process.exit(1);
  }
  console.log(`ok ${n}`);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'server') server(...rest);
else if (mode === 'client') client(rest[0], rest[1], Number(rest[2]), rest[3], Number(rest[4] || 50), rest[5]);
else { console.error(`unknown mode ${mode}`); process.exit(2); }
