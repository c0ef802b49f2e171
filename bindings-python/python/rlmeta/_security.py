"""``--command-config``: a Java Kafka client's properties file, turned into kafka-python 3.0.12's
keyword arguments for a secured cluster (host glue: files, stores and client settings only).

Honoured:
- ``security.protocol`` PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.
- ``sasl.mechanism`` SCRAM-SHA-512, SCRAM-SHA-256, PLAIN, with ``sasl.jaas.config`` naming
  ScramLoginModule / PlainLoginModule and its ``username`` / ``password``.
- Trust: ``ssl.truststore.type`` JKS (read with pyjks), PKCS12 (read with cryptography), PEM
  (``ssl.truststore.location`` or inline ``ssl.truststore.certificates``).
- Client certificate (mTLS): ``ssl.keystore.type`` JKS or PKCS12 with ``ssl.keystore.location``,
  ``ssl.keystore.password`` and ``ssl.key.password``; PEM with ``ssl.keystore.location`` or inline
  ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``.
- ``ssl.endpoint.identification.algorithm`` (empty: no host name check), and the librdkafka-style
  ``ssl.ca.location`` / ``ssl.certificate.location`` / ``ssl.key.location`` / ``ssl.key.password``.

Stores become one ``ssl.SSLContext``: trusted certificates are loaded from memory; a client key
and its chain go through a private temporary directory (0700, files 0600, the key encrypted with
a one-time password), removed by ``close()`` and at interpreter exit.

Anything that cannot be honoured (OAUTHBEARER, GSSAPI, a callback handler class, an unknown store
type, a wrong store password, ...) raises ``CommandConfigError`` before any connection, naming the
property and what to write instead. Tuning properties with no kafka-python equivalent are reported
on stderr and ignored. The tools exit 2 on ``CommandConfigError``, ``AuthenticationFailed`` and
``AccessDenied``.

pyjks and cryptography are imported only when a store needs them (never by ``import rlmeta``).
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import ssl
import sys
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._errors import ToolError


class CommandConfigError(ToolError):
    """A ``--command-config`` property the tools cannot honour (exit 2)."""

    def __init__(self, prop: str, message: str) -> None:
        super().__init__("command_config_invalid", f"--command-config: {prop}: {message}")
        self.prop = prop


class AuthenticationFailed(ToolError):
    """The cluster refused the credentials or the TLS handshake (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__("authentication_failed", message)


class AccessDenied(ToolError):
    """The cluster's authorizer refused an operation on a resource (exit 2)."""

    # Kafka's implied operations: an ACL for any of these also allows the key.
    IMPLIED_BY = {"DESCRIBE": ("READ", "WRITE", "DELETE", "ALTER"), "DESCRIBE_CONFIGS": ("ALTER_CONFIGS",)}

    def __init__(self, operation: str, resource: str, request: str, detail: str = "") -> None:
        implied = self.IMPLIED_BY.get(operation)
        grant = f"; an ACL for {operation} or {', '.join(implied)} allows it" if implied else ""
        super().__init__(
            "authorization_failed",
            f"authorization failed: the principal lacks {operation} on {resource} (needed for {request}"
            + (f", the broker answered {detail}" if detail else "") + f"){grant}"
        )
        self.operation, self.resource = operation, resource


STORE_TYPES = ("JKS", "PKCS12", "PEM")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_SASL_HINT = ("use sasl.mechanism=SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN with a ScramLoginModule/PlainLoginModule "
              "username and password in sasl.jaas.config, or mTLS (security.protocol=SSL with ssl.keystore.*)")
# Java classes kafka-python cannot load: the tool would silently authenticate differently.
_JAVA_CLASSES = (
    "sasl.login.callback.handler.class", "sasl.client.callback.handler.class", "sasl.login.class",
    "ssl.engine.factory.class", "security.providers", "ssl.provider", "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
)
# Client tuning with no effect on who the tool is or whom it trusts: reported and ignored.
_SIMPLE = {"client.id": ("client_id", str), "request.timeout.ms": ("request_timeout_ms", int)}


def load_properties(path: str) -> Dict[str, str]:
    """A Java ``.properties`` file: ``key=value`` or ``key: value`` lines, ``#``/``!`` comments,
    backslash line continuations."""
    props: Dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            text = re.sub(r"\\\n\s*", "", fh.read())
    except OSError as e:
        raise CommandConfigError(path, f"cannot read the file: {e.strerror or e}") from e
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", line)
        if m:
            props[m.group(1)] = m.group(2).strip()
    return props


def parse_jaas(value: str) -> Tuple[str, Dict[str, str]]:
    """``LoginModuleClass required key="value" ...;`` -> (class, options)."""
    m = re.match(r"\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b(.*?);?\s*$", value, re.S)
    if not m:
        raise CommandConfigError("sasl.jaas.config", 'expected `<LoginModule class> required username="..." password="...";`')
    options: Dict[str, str] = {}
    for k, quoted, bare in re.findall(r'([\w.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))', m.group(3)):
        options[k] = bare if bare else quoted
    return m.group(1), {k: v.replace('\\"', '"') for k, v in options.items()}


class ClientSecurity:
    """kafka-python settings for one ``--command-config`` (``conf``); ``close()`` removes its files."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)
        self.conf: Dict[str, Any] = {}
        self.warnings: List[str] = []
        self._dir: Optional[str] = None
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    # ---- the properties ---------------------------------------------------------------------
    def _get(self, key: str) -> Optional[str]:
        v = self.props.get(key)
        return v if v not in (None, "") else None

    def _build(self) -> None:
        p = self.props
        for key in _JAVA_CLASSES:
            if self._get(key):
                raise CommandConfigError(key, "names a Java class or provider, which this Python tool cannot load; remove it "
                                         "(for SASL: " + _SASL_HINT + ")")
        protocol = (self._get("security.protocol") or "PLAINTEXT").upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise CommandConfigError("security.protocol", f"unknown value {p['security.protocol']!r}; write one of {', '.join(SECURITY_PROTOCOLS)}")
        self.conf["security_protocol"] = protocol
        if protocol.startswith("SASL_"):
            self._sasl()
        else:
            for key in ("sasl.mechanism", "sasl.jaas.config"):
                if self._get(key):
                    self.warnings.append(f"{key} is ignored: security.protocol={protocol} does not use SASL")
        if protocol.endswith("SSL"):
            self.conf["ssl_context"] = self._ssl_context()
        elif any(k.startswith("ssl.") and self._get(k) for k in p):
            self.warnings.append(f"ssl.* properties are ignored: security.protocol={protocol} does not use TLS")
        handled = {"security.protocol", "sasl.mechanism", "sasl.jaas.config", "bootstrap.servers"}
        for key, value in p.items():
            if key in _SIMPLE:
                name, conv = _SIMPLE[key]
                try:
                    self.conf[name] = conv(value)
                except ValueError as e:
                    raise CommandConfigError(key, f"not a number: {value!r}") from e
            elif key not in handled and not key.startswith("ssl."):
                self.warnings.append(f"{key} has no kafka-python equivalent; ignored")

    def _sasl(self) -> None:
        mech = (self._get("sasl.mechanism") or "").upper()
        if not mech:
            raise CommandConfigError("sasl.mechanism", "not set, and a Java client's default, GSSAPI (Kerberos), is not supported "
                                     "by this tool; " + _SASL_HINT)
        if mech not in LOGIN_MODULES:
            what = {"GSSAPI": "GSSAPI (Kerberos) is not supported by this tool",
                    "OAUTHBEARER": "OAUTHBEARER needs a Java login callback handler, which this tool cannot run"}.get(
                mech, f"unknown mechanism {mech!r}")
            raise CommandConfigError("sasl.mechanism", f"{what}; {_SASL_HINT}")
        self.conf["sasl_mechanism"] = mech
        jaas = self._get("sasl.jaas.config")
        if not jaas:
            raise CommandConfigError("sasl.jaas.config", f'not set; write sasl.jaas.config={LOGIN_MODULES[mech]} required '
                                     'username="USER" password="PASSWORD";')
        module, options = parse_jaas(jaas)
        if module != LOGIN_MODULES[mech]:
            raise CommandConfigError("sasl.jaas.config", f"login module {module} does not match sasl.mechanism={mech}; write "
                                     f'{LOGIN_MODULES[mech]} required username="USER" password="PASSWORD";')
        for opt in ("username", "password"):
            if opt not in options:
                raise CommandConfigError("sasl.jaas.config", f'{module} has no {opt}="..." option')
        if options.get("tokenauth", "false").lower() == "true":
            raise CommandConfigError("sasl.jaas.config", "tokenauth=true (delegation tokens) is not supported by this tool; "
                                     "use a SCRAM user's own username and password")
        self.conf["sasl_plain_username"] = options["username"]
        self.conf["sasl_plain_password"] = options["password"]

    # ---- TLS ----------------------------------------------------------------------------------
    def _ssl_context(self) -> ssl.SSLContext:
        for key in ("ssl.truststore.type", "ssl.keystore.type"):
            if self._get(key) and self.props[key].upper() not in STORE_TYPES:
                raise CommandConfigError(key, f"unknown store type {self.props[key]!r}; write one of {', '.join(STORE_TYPES)} "
                                         "(convert other stores with keytool -importkeystore -deststoretype PKCS12)")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        algo = self.props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
        if algo not in ("", "https"):
            raise CommandConfigError("ssl.endpoint.identification.algorithm", f"unknown value {algo!r}; write https or leave it empty")
        ctx.check_hostname = algo == "https"
        trusted = self._trusted_pem()
        if trusted is None:
            ctx.load_default_certs()
        else:
            try:
                ctx.load_verify_locations(cadata=trusted)
            except ssl.SSLError as e:
                raise CommandConfigError(self._trust_prop, f"the certificates could not be loaded: {e}") from e
        chain_key = self._client_pem()
        if chain_key is not None:
            chain, key = chain_key
            certfile, keyfile, password = self._write_client_files(chain, key)
            try:
                ctx.load_cert_chain(certfile, keyfile, password)
            except ssl.SSLError as e:
                raise CommandConfigError(self._key_prop, f"the key and certificate do not load: {e}") from e
        for key in self.props:
            if key.startswith("ssl.") and key not in _SSL_HANDLED and self._get(key):
                self.warnings.append(f"{key} has no kafka-python equivalent; ignored")
        return ctx

    _trust_prop = "ssl.truststore.location"
    _key_prop = "ssl.keystore.location"

    def _trusted_pem(self) -> Optional[str]:
        """The trusted certificates as PEM text, None for the system's default roots."""
        inline = self._get("ssl.truststore.certificates")
        location = self._get("ssl.truststore.location") or self._get("ssl.ca.location")
        stype = (self._get("ssl.truststore.type") or ("PEM" if inline or self._get("ssl.ca.location") else "JKS")).upper()
        if inline:
            self._trust_prop = "ssl.truststore.certificates"
            if stype != "PEM":
                raise CommandConfigError("ssl.truststore.type", f"{stype} with inline ssl.truststore.certificates; write ssl.truststore.type=PEM")
            if location:
                raise CommandConfigError("ssl.truststore.certificates", "given together with a truststore location; keep one of them")
            if "-----BEGIN CERTIFICATE-----" not in inline:
                raise CommandConfigError("ssl.truststore.certificates", "holds no -----BEGIN CERTIFICATE----- block")
            return _pem_text(inline)
        if not location:
            return None
        self._trust_prop = "ssl.truststore.location" if self._get("ssl.truststore.location") else "ssl.ca.location"
        data = _read(self._trust_prop, location)
        password = self.props.get("ssl.truststore.password")
        if stype == "PEM":
            if b"-----BEGIN CERTIFICATE-----" not in data:
                raise CommandConfigError(self._trust_prop, f"{location} holds no PEM certificate (ssl.truststore.type=PEM)")
            return data.decode("ascii", "replace")
        if stype == "JKS" and _is_jks(data):
            return _jks_trusted(data, password, location)
        if stype in ("PKCS12", "JKS") and data[:1] == b"\x30":  # Java's JKS keystore type reads PKCS12 files too
            return _p12_trusted(data, password, location)
        if stype not in ("JKS", "PKCS12"):
            raise CommandConfigError("ssl.truststore.type", f"unknown store type {stype!r}; write JKS, PKCS12 or PEM")
        raise CommandConfigError(self._trust_prop, f"{location} is not a {stype} store")

    def _client_pem(self) -> Optional[Tuple[List[bytes], Any]]:
        """The client certificate chain (DER) and private key (a cryptography key), or None."""
        chain_inline, key_inline = self._get("ssl.keystore.certificate.chain"), self._get("ssl.keystore.key")
        location = self._get("ssl.keystore.location")
        stype = (self._get("ssl.keystore.type") or ("PEM" if chain_inline or key_inline else "JKS")).upper()
        key_password = self.props.get("ssl.key.password")
        if self._get("ssl.certificate.location"):  # librdkafka-style PEM files
            self._key_prop = "ssl.key.location"
            cert = _read("ssl.certificate.location", self.props["ssl.certificate.location"])
            keyf = self._get("ssl.key.location")
            key = _read("ssl.key.location", keyf) if keyf else cert
            return _pem_chain("ssl.certificate.location", cert), _pem_key("ssl.key.location", key, key_password)
        if chain_inline or key_inline:
            self._key_prop = "ssl.keystore.key"
            if stype != "PEM":
                raise CommandConfigError("ssl.keystore.type", f"{stype} with inline ssl.keystore.key; write ssl.keystore.type=PEM")
            if not (chain_inline and key_inline):
                raise CommandConfigError("ssl.keystore.key" if chain_inline else "ssl.keystore.certificate.chain",
                                         "not set; an inline PEM keystore needs both ssl.keystore.certificate.chain and ssl.keystore.key")
            return (_pem_chain("ssl.keystore.certificate.chain", _pem_text(chain_inline).encode()),
                    _pem_key("ssl.keystore.key", _pem_text(key_inline).encode(), key_password))
        if not location:
            return None
        data = _read("ssl.keystore.location", location)
        password = self.props.get("ssl.keystore.password")
        if stype == "PEM":
            return _pem_chain("ssl.keystore.location", data), _pem_key("ssl.keystore.location", data, key_password)
        if stype == "JKS" and _is_jks(data):
            return _jks_key(data, password, key_password, location)
        if stype in ("PKCS12", "JKS") and data[:1] == b"\x30":
            return _p12_key(data, password, key_password, location)
        if stype not in ("JKS", "PKCS12"):
            raise CommandConfigError("ssl.keystore.type", f"unknown store type {stype!r}; write JKS, PKCS12 or PEM")
        raise CommandConfigError("ssl.keystore.location", f"{location} is not a {stype} store")

    def _write_client_files(self, chain: List[bytes], key: Any) -> Tuple[str, str, str]:
        from cryptography.hazmat.primitives import serialization
        from cryptography.x509 import load_der_x509_certificate

        self._dir = tempfile.mkdtemp(prefix="rlmeta-tls.")  # mode 0700
        atexit.register(self.close)
        password = secrets.token_hex(16)
        certfile, keyfile = os.path.join(self._dir, "chain.pem"), os.path.join(self._dir, "key.pem")
        pem_chain = b"".join(load_der_x509_certificate(c).public_bytes(serialization.Encoding.PEM) for c in chain)
        pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.BestAvailableEncryption(password.encode()))
        for path, data in ((certfile, pem_chain), (keyfile, pem_key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        return certfile, keyfile, password

    def close(self) -> None:
        d, self._dir = self._dir, None
        if d:
            shutil.rmtree(d, ignore_errors=True)


_SSL_HANDLED = {
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.endpoint.identification.algorithm",
    "ssl.ca.location", "ssl.certificate.location", "ssl.key.location",
}


# ---- stores ---------------------------------------------------------------------------------------
def _read(prop: str, path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as e:
        raise CommandConfigError(prop, f"cannot read {path}: {e.strerror or e}") from e


def _pem_text(value: str) -> str:
    """Inline PEM as a properties file holds it (on one line, or with literal \\n)."""
    text = value.replace("\\n", "\n")
    text = re.sub(r"(-----BEGIN [A-Z ]+-----)\s*", r"\1\n", text)
    text = re.sub(r"\s*(-----END [A-Z ]+-----)", r"\n\1\n", text)
    lines = []
    for line in text.splitlines():
        lines.extend(line.split() if not line.startswith("-----") else [line])
    return "\n".join(lines) + "\n"


def _is_jks(data: bytes) -> bool:
    return data[:4] in (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce")


def _password(prop: str, password: Optional[str]) -> str:
    if password is None:
        raise CommandConfigError(prop, "not set; the store is password-protected")
    return password


def _jks(data: bytes, password: Optional[str], location: str, prop: str) -> Any:
    import jks  # pyjks

    try:
        return jks.KeyStore.loads(data, _password(prop, password), try_decrypt_keys=False)
    except jks.util.KeystoreSignatureException as e:
        raise CommandConfigError(prop, f"wrong password for {location}") from e
    except (jks.util.BadKeystoreFormatException, jks.util.UnsupportedKeystoreVersionException) as e:
        raise CommandConfigError(prop.replace("password", "location"), f"{location} is not a readable JKS store: {e}") from e


def _jks_trusted(data: bytes, password: Optional[str], location: str) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    ks = _jks(data, password, location, "ssl.truststore.password")
    ders = [e.cert for e in ks.certs.values()]
    if not ders:
        raise CommandConfigError("ssl.truststore.location", f"{location} holds no trusted certificate entry")
    return "".join(x509.load_der_x509_certificate(d).public_bytes(serialization.Encoding.PEM).decode() for d in ders)


def _jks_key(data: bytes, password: Optional[str], key_password: Optional[str], location: str) -> Tuple[List[bytes], Any]:
    import jks
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    ks = _jks(data, password, location, "ssl.keystore.password")
    entries = list(ks.private_keys.values())
    if len(entries) != 1:
        raise CommandConfigError("ssl.keystore.location", f"{location} holds {len(entries)} private key entries; this tool needs exactly one")
    entry = entries[0]
    for prop, pw in (("ssl.key.password", key_password), ("ssl.keystore.password", password)):
        if pw is None:
            continue
        try:
            entry.decrypt(pw)
            break
        except jks.util.DecryptionFailureException:
            continue
    if not entry.is_decrypted():
        raise CommandConfigError("ssl.key.password", f"does not decrypt the private key {entry.alias!r} of {location}"
                                 if key_password is not None else f"not set, and ssl.keystore.password does not decrypt the key of {location}")
    return [c[1] for c in entry.cert_chain], load_der_private_key(entry.pkey_pkcs8, None)


def _p12(data: bytes, password: Optional[str], location: str, prop: str) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    pw = None if password is None else password.encode()
    try:
        return pkcs12.load_pkcs12(data, pw)
    except ValueError as e:
        raise CommandConfigError(prop, f"wrong password for {location}, or not a PKCS12 store ({e})") from e


def _p12_trusted(data: bytes, password: Optional[str], location: str) -> str:
    from cryptography.hazmat.primitives import serialization

    p12 = _p12(data, password, location, "ssl.truststore.password")
    certs = [c.certificate for c in p12.additional_certs] + ([p12.cert.certificate] if p12.cert else [])
    if not certs:
        raise CommandConfigError("ssl.truststore.location", f"{location} holds no certificate")
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)


def _p12_key(data: bytes, password: Optional[str], key_password: Optional[str], location: str) -> Tuple[List[bytes], Any]:
    from cryptography.hazmat.primitives import serialization

    p12 = _p12(data, password, location, "ssl.keystore.password")
    if p12.key is None or p12.cert is None:
        raise CommandConfigError("ssl.keystore.location", f"{location} holds no private key with its certificate")
    chain = [p12.cert.certificate] + [c.certificate for c in p12.additional_certs]
    return [c.public_bytes(serialization.Encoding.DER) for c in chain], p12.key


def _pem_chain(prop: str, data: bytes) -> List[bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError as e:
        raise CommandConfigError(prop, f"holds no PEM certificate: {e}") from e
    return [c.public_bytes(serialization.Encoding.DER) for c in certs]


def _pem_key(prop: str, data: bytes, password: Optional[str]) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    m = re.search(rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----", data, re.S)
    if not m:
        raise CommandConfigError(prop, "holds no PEM private key")
    try:
        return load_pem_private_key(m.group(0), None if password is None else password.encode())
    except (ValueError, TypeError) as e:
        which = "ssl.key.password"
        raise CommandConfigError(which, f"does not decrypt the private key in {prop}: {e}") from e


def client_security(props: Mapping[str, str]) -> ClientSecurity:
    """Parses the properties; prints each ignored property on stderr."""
    sec = ClientSecurity(props)
    for w in sec.warnings:
        print(f"warning: --command-config property {w}", file=sys.stderr)
    return sec
