// Shapes of the public API the console reads (spec + /api/v1/openapi.json); only the fields it uses.

export type Role = 'admin' | 'tenant_admin' | 'agent_creator';

/** The signed-in user, as the login response's `user`. */
export interface SessionUser {
  id: string;
  email: string;
  name: string | null;
  roles: Role[];
  tenantId: string | null;
}

export interface RequiredCredential {
  serviceType: string;
  description?: string;
}

export interface Agent {
  id: string;
  name: string;
  upstreamUrl: string;
  hasUpstreamSecret: boolean;
  isActive: boolean;
  requireConfirmation: boolean;
  requiredCredentials: RequiredCredential[];
  runtimeTokenPrefix: string;
  createdAt: string;
  description?: string | null;
  tenantId?: string | null;
}

export type ToolProviderAuthType = 'bearer' | 'api_key' | 'none';

export interface ToolProvider {
  id: string;
  name: string;
  pattern: string;
  /** Null for callers who may not update the provider (the URL may embed a key). */
  endpoint: string | null;
  authType: ToolProviderAuthType;
  hasAuthSecret: boolean;
  priority: number;
  description: string | null;
  tenantId: string | null;
}

export interface UpstreamTool {
  name: string;
  description: string | null;
  inputSchema: Record<string, unknown>;
}

export type PolicyAction = 'allow' | 'deny' | 'require_confirmation';
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';
export const RISK_LEVELS: RiskLevel[] = ['low', 'medium', 'high', 'critical'];

export interface AccessRule {
  id: string;
  subjectType: 'user' | 'agent';
  subjectId: string;
  providerId: string;
  action: PolicyAction;
  toolPattern: string;
  riskLevel: RiskLevel | null;
  confirmationMode: 'always' | 'never' | null;
  description: string | null;
  tenantId: string | null;
  createdAt: string;
}

export interface PolicyDecision {
  action: PolicyAction;
  risk: RiskLevel;
  matchedRule: AccessRule | null;
}

export type ApiKeyScope = 'credentials:resolve' | 'credentials:read' | 'credentials:write';
export const API_KEY_SCOPES: ApiKeyScope[] = ['credentials:resolve', 'credentials:read', 'credentials:write'];

export interface ApiKey {
  id: string;
  name: string;
  scopes: ApiKeyScope[];
  keyPrefix: string;
  tenantId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

export type CredentialAuthType = 'oauth2' | 'api_key' | 'jwt' | 'basic';

export interface CredentialProvider {
  id: string;
  name: string;
  serviceType: string;
  authType: CredentialAuthType;
  description: string | null;
  config: Record<string, unknown>;
  tenantId: string | null;
}

export interface StoredCredential {
  id: string;
  serviceType: string;
  kind: string;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Device {
  id: string;
  platform: 'ios' | 'macos' | 'android';
  deviceName: string | null;
  pushTokenPrefix: string;
  isActive: boolean;
  createdAt: string;
}

export type AuditStatus = 'pending' | 'confirmed' | 'rejected' | 'completed' | 'failed';
export const AUDIT_STATUSES: AuditStatus[] = ['pending', 'confirmed', 'rejected', 'completed', 'failed'];

export interface AuditEntry {
  id: string;
  userId: string | null;
  agentId: string | null;
  endUserId: string | null;
  providerId: string | null;
  toolName: string;
  arguments: unknown;
  result: unknown;
  status: AuditStatus;
  duration: number | null;
  confirmedBy: string | null;
  error?: string | null;
  tenantId?: string | null;
  createdAt?: string;
  timestamp?: string;
}

export interface AuditPage {
  data: AuditEntry[];
  pagination: { limit: number; offset: number; total: number };
}

export interface AuditStats {
  total: number;
  byStatus: Partial<Record<AuditStatus, number>>;
  avgDuration: number | null;
}

export type ConfirmationStatus = 'pending' | 'confirmed' | 'rejected' | 'expired' | 'consumed';
export const CONFIRMATION_STATUSES: ConfirmationStatus[] = ['pending', 'confirmed', 'rejected', 'expired', 'consumed'];
