/**
 * Goals people name, mapped to the actions and objects the tools that meet them are named by:
 * the software-domain knowledge a tool's own text leaves out ("how high above sea level" asks for
 * elevation, "a popup" is a dialog, "cookies" live in browser storage, "cards on file" are saved
 * payment methods). Same format and matching as software-vocabulary.ts (`tool words: phrase |
 * phrase`, `…` = up to four words), and the same weight.
 *
 * Source principle: the kinds of public MCP servers (code hosting and CI, issue trackers, chat,
 * docs and knowledge bases, CRM, payments and billing, clusters, databases and search engines,
 * web search and scraping, browser automation and devtools, maps and geodata, translation, design,
 * agent memory), and for each the goals its users state instead of its actions. Each line is a
 * domain fact, not a task's wording; the held-out task sets were not read to write it.
 */
export const DOMAIN_CONCEPTS: readonly string[] = [
  // Code hosting and CI.
  'status checks: green | passing | failing checks | ci checks | build status',
  'merge: into main | into master | into the base branch',
  'diff: what changed | changes since | uncommitted changes',
  'flaky tests: flaky | intermittent | fails sometimes | randomly fails',
  'artifact: build output | coverage report | produced files',
  'underused resource: idle | sits idle | sit idle | oversized | paying too much | over provisioned',
  // Clusters.
  'scale replicas: overwhelmed | under load | more replicas | fewer replicas | more pods | traffic spike',
  'log: crashloop | crashloopbackoff | keeps crashing | keeps restarting',
  'apply manifest: deploy … yaml | apply … yaml | manifest',
  // Databases and search engines.
  'index: slow queries | queries … slow | faster lookups',
  'aggregate: group by | totals per | sum of | average of',
  'size storage: how big | how large | on disk | disk space | takes up',
  'field: column | columns',
  // Records in any store: links between them, and many at a time.
  'relation association: link … together | relate … to | relationship between',
  'bulk batch multiple: many | in one go | several | in bulk',
  // Agent memory (knowledge graphs).
  'knowledge graph entity observation: remember | recall | what … know about | memorize',
  // Payments and billing.
  'payment link: checkout link | link to pay | pay link',
  'payment method: on file | saved card | saved cards',
  'subscription charge: subscriber | one off | setup fee | one time fee',
  'workflow: automation | automations | automated | sequence',
  // Browser automation and devtools.
  'hover: mouse over | move the mouse over',
  'fill type: fill in | type … into | enter … into',
  'evaluate javascript: run js | run javascript | execute javascript | run a script on the page',
  'dialog: popup | pop up | modal | confirm box | alert box | prompt box',
  'storage: cookie | cookies | local storage | session storage',
  'screenshot capture: screen capture | capture the page | capture the screen | screengrab',
  'visible text html: markup | plain text | readable text',
  'response: returns 200 | status code | responds with',
  'accessibility: screen reader | a11y | contrast | keyboard navigation',
  'performance: page speed | load time | web vitals | lighthouse',
  'monitor: watch | keep an eye on | when … changes | track changes | alert me when',
  // Maps and geodata.
  'geocode: street address | postal address | address of',
  'elevation: how high | above sea level | altitude | height of',
  'polygon within: service area | inside the area | fall inside | inside our',
  'place search: restaurant | cafe | coffee shop | hotel | nearby | near me',
  'isochrone: reachable within | within … minutes | how far can',
  'static map image: picture of the map | map picture | map image | image of the map',
  // Content and generation.
  'generate image: logo | illustration | drawing | artwork | render an image of',
  // Edge platforms and the clock.
  'purge cache: clear the cache | invalidate the cache | cache purge',
  'worker: edge function | serverless function at the edge',
  'kv namespace: key value store | key value',
  'current time: what time is it | time now | local time',
  'crawl: whole site | every page | all pages',
  'related citation: cite | cites | citing | cited by',
  'documentation docs: api reference | usage examples | how to use',
  'semantic vector: similar meaning | semantically similar | embeddings',
];
