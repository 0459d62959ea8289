import { useEffect } from 'react';
import { ConfirmationsProvider } from './confirmations-context.js';
import { Layout } from './components/layout.js';
import { landingPath } from './navigation.js';
import { AccessRulesPage } from './pages/access-rules.js';
import { AgentDetailPage } from './pages/agent-detail.js';
import { AgentsPage } from './pages/agents.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { AuditPageView } from './pages/audit.js';
import { ConnectPage, ExternalLoginButtons } from './pages/connect.js';
import { ConnectedClientsPage } from './pages/connected-clients.js';
import { ConfirmationsPage } from './pages/confirmations.js';
import { CredentialProvidersPage } from './pages/credential-providers.js';
import { CredentialsPage } from './pages/credentials.js';
import { DevicesPage } from './pages/devices.js';
import { SignInPage } from './pages/sign-in.js';
import { ToolPinsPage } from './pages/tool-pins.js';
import { ToolCollisionsPage } from './pages/tool-collisions.js';
import { ToolProvidersPage } from './pages/tool-providers.js';
import { UsersPage } from './pages/users.js';
import { Link, navigate, useLocation } from './router.js';
import { SessionProvider, useSession } from './session.js';

/** The console page of a pending MCP client sign-in: /connect/<uid>. */
const CONNECT_PATH = /^\/connect\/([A-Za-z0-9_-]{1,64})$/;

/** The console: sign-in when nobody is signed in, otherwise the page for the path (as the user's roles allow). */
export function App() {
  return (
    <SessionProvider>
      <Routes />
    </SessionProvider>
  );
}

function Routes() {
  const { user, restoring } = useSession();
  const { path, href } = useLocation();
  const target = user ? landingPath(user, href) : null;
  useEffect(() => {
    if (target && target !== href) navigate(target, { replace: true });
  }, [target, href]);
  useEffect(() => {
    document.title = `${path === '/' ? 'Console' : path.split('/')[1]?.replace('-', ' ')} · Agent Gateway`;
  }, [path]);

  if (restoring) {
    return (
      <main id="main" className="sign-in">
        <p className="loading" role="status">
          Restoring your session…
        </p>
      </main>
    );
  }
  if (!user) {
    // A pending MCP client sign-in may also be continued at an external identity provider.
    const pending = CONNECT_PATH.exec(path)?.[1];
    return pending ? (
      <SignInPage purpose="mcp-client">
        <ExternalLoginButtons uid={pending} />
      </SignInPage>
    ) : (
      <SignInPage />
    );
  }
  return (
    <ConfirmationsProvider>
      <Page path={path} />
    </ConfirmationsProvider>
  );
}

function Page({ path }: { path: string }) {
  const connect = CONNECT_PATH.exec(path);
  if (connect?.[1]) return <ConnectPage uid={connect[1]} />;
  const agent = /^\/agents\/([^/]+)$/.exec(path);
  if (agent?.[1]) return <AgentDetailPage id={decodeURIComponent(agent[1])} />;
  switch (path) {
    case '/agents':
      return <AgentsPage />;
    case '/tool-providers':
      return <ToolProvidersPage />;
    case '/tool-collisions':
      return <ToolCollisionsPage />;
    case '/access-rules':
      return <AccessRulesPage />;
    case '/tool-pins':
      return <ToolPinsPage />;
    case '/api-keys':
      return <ApiKeysPage />;
    case '/credential-providers':
      return <CredentialProvidersPage />;
    case '/credentials':
      return <CredentialsPage />;
    case '/confirmations':
      return <ConfirmationsPage />;
    case '/audit':
      return <AuditPageView />;
    case '/devices':
      return <DevicesPage />;
    case '/users':
      return <UsersPage />;
    case '/connected-clients':
      return <ConnectedClientsPage />;
    default:
      return (
        <Layout title="Page not found">
          <p>
            There is no page at {path}. <Link href="/agents">Go to the agents</Link>.
          </p>
        </Layout>
      );
  }
}
