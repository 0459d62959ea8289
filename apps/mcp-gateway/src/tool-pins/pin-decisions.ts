import type { DefinitionHashes, ToolDefinition, ToolPinningMode, ToolPinStatus } from '@agentgw/core';

/** What the gateway knows of one tool's pin (a tool_pins row). */
export interface PinState {
  toolName: string;
  status: ToolPinStatus;
  pinnedHash: string | null;
  pinnedBodyHash: string | null;
  pendingHash: string | null;
}

/** One tool as a provider lists it now. */
export interface SeenTool extends DefinitionHashes {
  definition: ToolDefinition;
}

/** A change of a pin to write (each applied only if the row still is as it was read, so replicas agree). */
export type PinWrite =
  | { kind: 'pin'; toolName: string; tool: SeenTool; renamedFrom: string | null }
  | {
      kind: 'quarantine';
      toolName: string;
      status: 'new' | 'changed';
      tool: SeenTool;
      renamedFrom: string | null;
      exists: boolean;
    }
  | { kind: 'revert'; toolName: string; hash: string };

/** Whether a tool is served, why not (quarantined as never approved, changed or kept blocked), and what to write. */
export type PinDecision =
  | { visible: true; write: PinWrite | null }
  | { visible: false; status: Exclude<ToolPinStatus, 'pinned'>; write: PinWrite | null };

const SERVE: PinDecision = { visible: true, write: null };

/**
 * Decides one tool of a provider's list. `off` serves everything and writes nothing. A tool whose
 * definition matches its pin is served (and a quarantine of another definition is dropped: the
 * upstream went back). A differing definition is quarantined (`changed`), as is a first-seen tool
 * under `approval` (`new`); `first_sight` pins a first-seen tool. A tool kept `blocked` stays
 * hidden while the upstream offers the definition an admin blocked; another definition is
 * quarantined afresh. A first-seen name whose definition (minus the name) is that of a pinned
 * tool the list no longer has is reported as a rename of it (`renamedFrom`), but its name still
 * needs approval under `approval`: a pin covers the name the model sees.
 */
export function decidePin(
  mode: ToolPinningMode,
  pin: PinState | undefined,
  tool: SeenTool,
  renamedFrom: string | null,
): PinDecision {
  if (mode === 'off') return SERVE;
  const toolName = tool.definition.name;
  if (pin?.pinnedHash === tool.hash)
    return pin.status === 'pinned' ? SERVE : { visible: true, write: { kind: 'revert', toolName, hash: tool.hash } };
  if (pin === undefined) {
    if (mode === 'first_sight') return { visible: true, write: { kind: 'pin', toolName, tool, renamedFrom } };
    return {
      visible: false,
      status: 'new',
      write: { kind: 'quarantine', toolName, status: 'new', tool, renamedFrom, exists: false },
    };
  }
  const status = pin.pinnedHash === null ? 'new' : 'changed';
  if (pin.pendingHash === tool.hash)
    return { visible: false, status: pin.status === 'pinned' ? status : pin.status, write: null };
  return {
    visible: false,
    status,
    write: { kind: 'quarantine', toolName, status, tool, renamedFrom: null, exists: true },
  };
}

/** The pinned tools a list no longer offers, by body hash: a first-seen name with one of these definitions is a rename. */
export function missingPinnedBodies(
  pins: ReadonlyMap<string, PinState>,
  listed: ReadonlySet<string>,
): Map<string, string> {
  const missing = new Map<string, string>();
  for (const pin of pins.values()) {
    if (pin.pinnedBodyHash !== null && !listed.has(pin.toolName) && !missing.has(pin.pinnedBodyHash))
      missing.set(pin.pinnedBodyHash, pin.toolName);
  }
  return missing;
}
