/**
 * The public MCP servers the real-catalog bench lists (devDependencies of this package, issue 35):
 * each started from its own npm package over stdio with fake credentials, so it lists its tools
 * without reaching its service. Nothing of their tool text is kept in the repository.
 */
export interface RealServer {
  /** The provider name the bench files the server's tools under (and the task sets name). */
  id: string;
  /** A one-line title, as an operator would enter it for the provider. */
  title: string;
  /** The npm package; its `bin` is started with node. */
  pkg: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
}

const FAKE = 'fake-credential-for-listing-only';

export const REAL_SERVERS: readonly RealServer[] = [
  { id: 'everything', title: 'MCP reference test server', pkg: '@modelcontextprotocol/server-everything' },
  { id: 'memory', title: 'Knowledge graph memory', pkg: '@modelcontextprotocol/server-memory' },
  { id: 'filesystem', title: 'Local files', pkg: '@modelcontextprotocol/server-filesystem', args: ['/tmp'] },
  {
    id: 'sequential-thinking',
    title: 'Step-by-step reasoning',
    pkg: '@modelcontextprotocol/server-sequential-thinking',
  },
  { id: 'playwright', title: 'Playwright browser', pkg: '@playwright/mcp', args: ['--headless'] },
  {
    id: 'github',
    title: 'GitHub',
    pkg: '@modelcontextprotocol/server-github',
    env: { GITHUB_PERSONAL_ACCESS_TOKEN: FAKE },
  },
  {
    id: 'gitlab',
    title: 'GitLab',
    pkg: '@modelcontextprotocol/server-gitlab',
    env: { GITLAB_PERSONAL_ACCESS_TOKEN: FAKE },
  },
  { id: 'notion', title: 'Notion', pkg: '@notionhq/notion-mcp-server', env: { NOTION_TOKEN: FAKE } },
  { id: 'sentry', title: 'Sentry', pkg: '@sentry/mcp-server', args: [`--access-token=${FAKE}`] },
  { id: 'mongodb', title: 'MongoDB', pkg: 'mongodb-mcp-server' },
  { id: 'firecrawl', title: 'Firecrawl web scraping', pkg: 'firecrawl-mcp', env: { FIRECRAWL_API_KEY: FAKE } },
  {
    id: 'brave-search',
    title: 'Brave Search',
    pkg: '@modelcontextprotocol/server-brave-search',
    env: { BRAVE_API_KEY: FAKE },
  },
  { id: 'tavily', title: 'Tavily web search', pkg: 'tavily-mcp', env: { TAVILY_API_KEY: FAKE } },
  { id: 'exa', title: 'Exa web search', pkg: 'exa-mcp-server', env: { EXA_API_KEY: FAKE } },
  {
    id: 'slack',
    title: 'Slack',
    pkg: '@modelcontextprotocol/server-slack',
    env: { SLACK_BOT_TOKEN: FAKE, SLACK_TEAM_ID: 'T00000000' },
  },
  {
    id: 'postgres',
    title: 'PostgreSQL',
    pkg: '@modelcontextprotocol/server-postgres',
    args: ['postgres://nobody@127.0.0.1:1/none'],
  },
  {
    id: 'google-maps',
    title: 'Google Maps',
    pkg: '@modelcontextprotocol/server-google-maps',
    env: { GOOGLE_MAPS_API_KEY: FAKE },
  },
  { id: 'hubspot', title: 'HubSpot CRM', pkg: '@hubspot/mcp-server', env: { PRIVATE_APP_ACCESS_TOKEN: FAKE } },
  { id: 'kubernetes', title: 'Kubernetes', pkg: 'mcp-server-kubernetes' },
  { id: 'circleci', title: 'CircleCI', pkg: '@circleci/mcp-server-circleci', env: { CIRCLECI_TOKEN: FAKE } },
  { id: 'airtable', title: 'Airtable', pkg: 'airtable-mcp-server', env: { AIRTABLE_API_KEY: FAKE } },
  {
    id: 'line',
    title: 'LINE messaging',
    pkg: '@line/line-bot-mcp-server',
    env: { CHANNEL_ACCESS_TOKEN: FAKE, DESTINATION_USER_ID: 'U0' },
  },
  {
    id: 'everart',
    title: 'EverArt image generation',
    pkg: '@modelcontextprotocol/server-everart',
    env: { EVERART_API_KEY: FAKE },
  },
  {
    id: 'paddle',
    title: 'Paddle billing',
    pkg: '@paddle/paddle-mcp',
    env: { PADDLE_API_KEY: FAKE, PADDLE_ENVIRONMENT: 'sandbox' },
  },
  { id: 'linear', title: 'Linear', pkg: 'mcp-server-linear', env: { LINEAR_ACCESS_TOKEN: FAKE } },
  { id: 'playwright-automation', title: 'Playwright automation', pkg: '@executeautomation/playwright-mcp-server' },
  { id: 'browser-tools', title: 'Browser telemetry', pkg: '@agentdeskai/browser-tools-mcp' },
  { id: 'mapbox', title: 'Mapbox', pkg: '@mapbox/mcp-server', env: { MAPBOX_ACCESS_TOKEN: FAKE } },
  { id: 'pinecone', title: 'Pinecone vector database', pkg: '@pinecone-database/mcp', env: { PINECONE_API_KEY: FAKE } },
  { id: 'currents', title: 'Currents test reporting', pkg: '@currents/mcp', env: { CURRENTS_API_KEY: FAKE } },
  {
    id: 'elasticsearch',
    title: 'Elasticsearch',
    pkg: '@elastic/mcp-server-elasticsearch',
    env: { ES_URL: 'http://127.0.0.1:1', ES_API_KEY: FAKE },
  },
  {
    id: 'lara',
    title: 'Lara translation',
    pkg: '@translated/lara-mcp',
    env: { LARA_ACCESS_KEY_ID: FAKE, LARA_ACCESS_KEY_SECRET: FAKE },
  },
  { id: 'context7', title: 'Context7 library docs', pkg: '@upstash/context7-mcp' },
  { id: 'figma', title: 'Figma', pkg: 'figma-developer-mcp', args: ['--stdio', `--figma-api-key=${FAKE}`] },
];
