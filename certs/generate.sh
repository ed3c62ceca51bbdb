#!/usr/bin/env bash
# Regenerates the development PKI the TLS tests use: a CA, EC P-256 and RSA
# server and client certificates signed by it, one revoked server certificate
# and the CA's CRL listing it, all valid for ten years. Everything here is for
# loopback tests only; never use these keys anywhere else.
#
# Usage: certs/generate.sh   (writes into the directory that holds this script)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

days=3650
rm -rf ca-db && mkdir ca-db && touch ca-db/index.txt && echo 1000 > ca-db/serial && echo 1000 > ca-db/crlnumber

cat > ca.cnf <<CNF
[ ca ]
default_ca = dev_ca
[ dev_ca ]
database = ca-db/index.txt
certificate = ca.crt
private_key = ca.key
serial = ca-db/serial
crlnumber = ca-db/crlnumber
new_certs_dir = ca-db
default_md = sha256
default_days = $days
default_crl_days = $days
policy = any
unique_subject = no
copy_extensions = copy
[ any ]
commonName = supplied
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = h2sim dev CA
[ v3_ca ]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ server ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
authorityKeyIdentifier = keyid
[ client ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
CNF

openssl ecparam -name prime256v1 -genkey -noout -out ca.key.tmp
openssl pkcs8 -topk8 -nocrypt -in ca.key.tmp -out ca.key && rm ca.key.tmp
openssl req -new -x509 -config ca.cnf -extensions v3_ca -key ca.key -days "$days" -out ca.crt

# issue NAME KIND(ec|rsa) PROFILE(server|client) CN
issue() {
  if [ "$2" = ec ]; then
    openssl ecparam -name prime256v1 -genkey -noout -out "$1.key.tmp"
  else
    openssl genrsa -out "$1.key.tmp" 2048 2>/dev/null
  fi
  openssl pkcs8 -topk8 -nocrypt -in "$1.key.tmp" -out "$1.key" && rm "$1.key.tmp"
  openssl req -new -key "$1.key" -subj "/CN=$4" -out "$1.csr"
  openssl ca -batch -config ca.cnf -extfile ca.cnf -extensions "$3" -notext \
    -in "$1.csr" -out "$1.crt" 2>/dev/null
  rm "$1.csr"
}
issue server-ec ec server localhost
issue server-rsa rsa server localhost
issue client-ec ec client h2sim-client
issue client-rsa rsa client h2sim-client
issue server-revoked ec server localhost

openssl ca -config ca.cnf -revoke server-revoked.crt 2>/dev/null
openssl ca -config ca.cnf -gencrl -out ca.crl 2>/dev/null

# A trust directory in OpenSSL's hashed layout, for `trust_dir=` options.
rm -rf trust && mkdir trust && cp ca.crt ca.crl trust/ && openssl rehash trust 2>/dev/null || true
rm -rf ca-db ca.cnf
echo "certificates written to $(pwd)"
