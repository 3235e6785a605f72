/**
 * A sandbox's own certificate authority, made by its egress proxy process when the sandbox has bound
 * secrets: the sandbox trusts its certificate (and only that leaves the process), and the proxy
 * presents a leaf it signs for each bound domain, so that it can read the requests to those domains
 * and add the secret. Certificates are built with node-forge (no native code, one package, widely
 * used for this); keys are made by Node's crypto, which is much faster than forge's own.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import forge from 'node-forge';

const DAY_MS = 24 * 3600_000;

export class SessionCa {
  /** The CA's certificate (PEM): what the sandbox trusts. */
  readonly certPem: string;
  private readonly caKey: forge.pki.rsa.PrivateKey;
  private readonly caCert: forge.pki.Certificate;
  /** One key for every leaf of the session (the leaves differ only by name). */
  private readonly leafKeyPem: string;
  private readonly leafPublic: forge.pki.rsa.PublicKey;
  private readonly leaves = new Map<string, SecureContext>();

  constructor(now: Date = new Date()) {
    const ca = rsaPair();
    this.caKey = ca.privateKey;
    const cert = forge.pki.createCertificate();
    cert.publicKey = ca.publicKey;
    cert.serialNumber = serial();
    cert.validity.notBefore = new Date(now.getTime() - DAY_MS);
    cert.validity.notAfter = new Date(now.getTime() + 365 * DAY_MS);
    const subject = [
      { name: 'commonName', value: `Agent Sandbox session CA ${randomBytes(4).toString('hex')}` },
      { name: 'organizationName', value: 'Agent Sandbox' },
    ];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(this.caKey, forge.md.sha256.create());
    this.caCert = cert;
    this.certPem = forge.pki.certificateToPem(cert);
    const leaf = rsaPair();
    this.leafKeyPem = forge.pki.privateKeyToPem(leaf.privateKey);
    this.leafPublic = leaf.publicKey;
  }

  /** The TLS context that presents a leaf for `host`, signed by this CA (made once per name). */
  contextFor(host: string): SecureContext {
    let context = this.leaves.get(host);
    if (!context) {
      context = createSecureContext({ key: this.leafKeyPem, cert: `${this.leafPem(host)}${this.certPem}` });
      this.leaves.set(host, context);
    }
    return context;
  }

  private leafPem(host: string): string {
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.leafPublic;
    cert.serialNumber = serial();
    const now = Date.now();
    cert.validity.notBefore = new Date(now - DAY_MS);
    cert.validity.notAfter = new Date(now + 90 * DAY_MS);
    cert.setSubject([{ name: 'commonName', value: host }]);
    cert.setIssuer(this.caCert.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: host }] },
      { name: 'subjectKeyIdentifier' },
      { name: 'authorityKeyIdentifier', keyIdentifier: this.caCert.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cert.sign(this.caKey, forge.md.sha256.create());
    return forge.pki.certificateToPem(cert);
  }
}

function rsaPair(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey = forge.pki.privateKeyFromPem(
    pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  ) as forge.pki.rsa.PrivateKey;
  const publicKey = forge.pki.publicKeyFromPem(
    pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  ) as forge.pki.rsa.PublicKey;
  return { privateKey, publicKey };
}

/** A positive serial number of 16 random bytes, as hex. */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f;
  return bytes.toString('hex');
}
