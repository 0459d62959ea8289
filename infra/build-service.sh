#!/bin/sh
# Builds one service into a self-contained folder: its bundle in dist/ and its production
# node_modules (hoisted, so the bundle's third-party imports resolve). Used by the Dockerfile
# and by infra's test, so what the test runs is what the image holds.
# usage: infra/build-service.sh <service> <out-dir>
set -eu
service="$1"
out="$2"
pnpm --filter "@agentgw/${service}" run build
rm -rf "$out"
pnpm --filter "@agentgw/${service}" deploy --prod --legacy --config.node-linker=hoisted "$out"
rm -rf "$out/dist"
cp -r "apps/${service}/dist" "$out/dist"
