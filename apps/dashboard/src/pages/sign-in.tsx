import { useState, type FormEvent, type ReactNode } from 'react';
import { ErrorNotice, Success } from '../components/feedback.js';
import { TextField } from '../components/fields.js';
import { landingPath } from '../navigation.js';
import { navigate, useLocation } from '../router.js';
import { useSession } from '../session.js';
import { useAction } from '../use-resource.js';

/**
 * Why the person signs in: the console itself, or an MCP client's pending sign-in
 * (`/connect/<uid>`), which names what is going on and offers no new account (an application
 * asking for access is no moment to register).
 */
export type SignInPurpose = 'console' | 'mcp-client';

/** Sign in, or create an account (POST /auth/register) and sign straight in with it; `children` (other ways to sign in) go under the form. */
export function SignInPage({ children, purpose = 'console' }: { children?: ReactNode; purpose?: SignInPurpose }) {
  const { api, signIn, endedBecause } = useSession();
  const { href } = useLocation();
  const [mode, setMode] = useState<'sign-in' | 'register'>('sign-in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [registered, setRegistered] = useState(false);
  const action = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      if (mode === 'register') {
        await api.post('/auth/register', { email, password, name });
        setRegistered(true);
      }
      const user = await signIn(email, password);
      navigate(landingPath(user, href === '/' || href.startsWith('/sign-in') ? '/agents' : href), { replace: true });
    });
  };

  return (
    <main id="main" className="sign-in">
      <h1>Agent Gateway</h1>
      <div className={purpose === 'mcp-client' ? 'card mcp-client-sign-in' : 'card'}>
        {purpose === 'mcp-client' ? (
          <p className="notice" data-testid="mcp-client-notice">
            An application (an MCP client) asks to use this gateway on your behalf. Sign in with your gateway account;
            you will see what it asks for before you allow anything.
          </p>
        ) : (
          <div className="tabs" role="group" aria-label="Account">
            <button type="button" aria-pressed={mode === 'sign-in'} onClick={() => setMode('sign-in')}>
              Sign in
            </button>
            <button type="button" aria-pressed={mode === 'register'} onClick={() => setMode('register')}>
              Create account
            </button>
          </div>
        )}
        {endedBecause ? <p className="notice">{endedBecause}</p> : null}
        {registered ? <Success>Account created.</Success> : null}
        <form onSubmit={submit} aria-label={mode === 'sign-in' ? 'Sign in' : 'Create account'}>
          <h2>
            {mode === 'register' ? 'Create an account' : purpose === 'mcp-client' ? 'Sign in to connect it' : 'Sign in'}
          </h2>
          <TextField
            label="Email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
          <TextField
            label="Password"
            type="password"
            autoComplete={mode === 'sign-in' ? 'current-password' : 'new-password'}
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          {mode === 'register' ? (
            <TextField
              label="Name"
              autoComplete="name"
              required
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          ) : null}
          <ErrorNotice error={action.error} />
          <button type="submit" disabled={action.busy}>
            {action.busy ? 'Please wait…' : mode === 'sign-in' ? 'Sign in' : 'Create account'}
          </button>
        </form>
        {children}
      </div>
    </main>
  );
}
