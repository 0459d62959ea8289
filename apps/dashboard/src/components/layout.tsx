import { useEffect, useRef, type ReactNode } from 'react';
import { useLiveConfirmations } from '../confirmations-context.js';
import { pagesFor } from '../navigation.js';
import { Link, useLocation } from '../router.js';
import { useSession, useUser } from '../session.js';

/** The frame of every signed-in page: skip link, header, menu by role, main landmark. */
export function Layout({ title, children }: { title: string; children: ReactNode }) {
  const user = useUser();
  const { signOut } = useSession();
  const { path } = useLocation();
  const { pending } = useLiveConfirmations();
  const menu = useRef<HTMLElement>(null);
  // At phone width the menu scrolls sideways: keep the current page's entry in view.
  useEffect(() => {
    menu.current?.querySelector('[aria-current="page"]')?.scrollIntoView?.({ block: 'nearest', inline: 'center' });
  }, [path]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/agents" className="brand">
          Agent Gateway
        </Link>
        <span className="who">
          <span className="email">{user.email}</span>
          <span className="roles">
            {user.roles.join(', ')}
            {user.tenantId ? ` · tenant ${user.tenantId}` : ''}
          </span>
        </span>
        <button type="button" className="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav className="menu" aria-label="Console" ref={menu}>
        <ul>
          {pagesFor(user).map((p) => {
            const current = path === p.path || path.startsWith(`${p.path}/`);
            return (
              <li key={p.path}>
                <Link href={p.path} aria-current={current ? 'page' : undefined}>
                  {p.label}
                  {p.path === '/confirmations' && pending.length > 0 ? (
                    <span className="badge">
                      {pending.length}
                      <span className="sr-only"> pending</span>
                    </span>
                  ) : null}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {children}
      </main>
    </>
  );
}
