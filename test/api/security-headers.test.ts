import { expect } from 'chai';
import { forEachStore } from '../support/stores.js';
import { useService, V1 } from './helpers.js';

/** Headers that protect a browser user: on every answer, and a strict policy on every HTML page. */
forEachStore((fixture) => {
  describe('API: security headers', function () {
    const api = useService(fixture);

    it('every answer, JSON or error, forbids content sniffing and sends no referrer', async function () {
      for (const path of [`${V1}/metrics/count`, `${V1}/nope`, '/healthz', '/metrics', '/api/v1/docs']) {
        const res = await api().get(path);
        expect(res.headers.get('x-content-type-options'), path).to.equal('nosniff');
        expect(res.headers.get('referrer-policy'), path).to.equal('no-referrer');
      }
    });

    it('an HTML page carries a Content-Security-Policy without inline scripts that no site may frame', async function () {
      const res = await api().get('/api/v1/docs');
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      const policy = (res.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim());
      expect(policy).to.include("script-src 'self'");
      expect(policy).to.include("frame-ancestors 'none'");
      expect(policy.join(';')).to.not.include('unsafe-inline');
    });
  });
});
