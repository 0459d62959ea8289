import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { EMPTY_TOKEN_EXCHANGE } from '../pages/token-exchange-form.js';
import { TokenExchangeFields } from './token-exchange-fields.js';

const render = (props: Partial<Parameters<typeof TokenExchangeFields>[0]>) =>
  renderToStaticMarkup(
    <TokenExchangeFields value={EMPTY_TOKEN_EXCHANGE} onChange={() => undefined} error={null} {...props} />,
  );

describe('TokenExchangeFields', () => {
  it('offers the token endpoint by default, the client and a write-only secret', () => {
    const html = render({});
    expect(html).toContain('Token endpoint URL</label>');
    expect(html).toContain('Client ID</label>');
    expect(html).toMatch(
      /<input[^>]*type="password"[^>]*autoComplete="off"|<input[^>]*autoComplete="off"[^>]*type="password"/i,
    );
    expect(html).toContain('never shown again');
    expect(html).not.toContain('aria-invalid');
  });

  it('asks for the issuer when the server is given that way', () => {
    expect(render({ value: { ...EMPTY_TOKEN_EXCHANGE, serverKind: 'issuer' } })).toContain('Issuer URL</label>');
  });

  it('shows the API message on the refused field and marks it invalid', () => {
    const html = render({ error: { field: 'clientId', message: 'Required' } });
    expect(html).toMatch(
      /<label for="([^"]+)">Client ID<\/label><input id="\1" aria-describedby="\1-hint"[^>]*aria-invalid="true"/,
    );
    expect(html).toContain('>Required</small>');
    expect(html.match(/aria-invalid/g)).toHaveLength(1);
  });

  it('says an empty secret keeps the stored one when editing a provider that has one', () => {
    const html = render({ secretStored: true });
    expect(html).toContain('New client secret (optional)</label>');
    expect(html).toContain('Empty keeps it');
    expect(html).not.toContain('Empty: a public client');
  });

  it('shows a refusal of the whole section as an alert', () => {
    expect(render({ error: { field: 'tokenExchange', message: 'required with authType token_exchange' } })).toContain(
      'role="alert">required with authType token_exchange</p>',
    );
  });
});
