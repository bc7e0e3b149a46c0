/** A JSON Schema (draft 2020-12), as the registry publishes it. */
export type JsonSchema = { [keyword: string]: unknown };

/** UnifiedSkillContract v1 (ADR-0002): every field required. */
export interface UnifiedSkillContract {
  /** `name@version`, globally unique. */
  skill_id: string;
  metadata: {
    name: string;
    description: string;
    source: "GLOBAL" | "LOCAL";
    /** Optional fields a v1 contract may add. */
    status?: "enabled" | "deprecated" | "disabled";
    version?: string;
    [field: string]: unknown;
  };
  interface: {
    input_schema: JsonSchema;
    output_schema: JsonSchema;
  };
  constraints: {
    is_destructive: boolean;
    requires_hitl: boolean;
    sandbox_type: "DOCKER" | "WASM" | "LOCAL";
  };
}

/** One reason a call or a contract is refused, at a JSON pointer. */
export interface GroundError {
  /** JSON pointer into the arguments (or the contract); empty for the root. */
  path: string;
  message: string;
}

/** A call that grounds. */
export interface Grounded {
  ok: true;
  skill: UnifiedSkillContract;
  /** The arguments, parsed. */
  arguments: unknown;
  isDestructive: boolean;
  requiresHitl: boolean;
}

/** The runtime's error codes for a call that does not ground. */
export type RefusalCode =
  | "unknown_skill"
  | "unknown_version"
  | "disabled"
  | "sandbox_unavailable"
  | "too_large"
  | "too_deep"
  | "malformed_json"
  | "invalid_input";

/** A call that does not ground: the runtime's code and each error. */
export interface Refused {
  ok: false;
  code: RefusalCode;
  errors: GroundError[];
}

export type GroundResult = Grounded | Refused;

/** A tool call as a model proposed it. */
export interface ToolCall {
  /** The skill's name, its `name@version`, or its MCP/OpenAI tool name. */
  name: string;
  /** JSON text (as a tool call carries it), or a value. */
  arguments?: string | unknown;
}

/** Limits on a call's arguments: JSON text size in bytes, nesting depth. */
export interface Limits {
  maxInputBytes: number;
  maxDepth: number;
}

/** The runtime's default limits: 1 MiB, 64 deep. */
export const DEFAULT_LIMITS: Readonly<Limits>;

export interface RegistryOptions {
  limits?: Partial<Limits>;
}

/** Check one UnifiedSkillContract v1 strictly: any missing or wrongly typed field rejects it. */
export function validateSkillContract(
  value: unknown,
): { ok: true; contract: UnifiedSkillContract } | { ok: false; errors: GroundError[] };

/** A registry that does not load: every contract that failed, with why. */
export class RegistryError extends Error {
  errors: Array<GroundError & { skill?: string }>;
}

export class SkillRegistry {
  /** Read `skill-registry.json`, or the UnifiedSkillContract v1 export. */
  static fromFile(path: string, options?: RegistryOptions): SkillRegistry;
  /** A registry from a parsed `skill-registry.json` or UnifiedSkillContract v1 array. */
  static fromJson(value: unknown, options?: RegistryOptions): SkillRegistry;
  constructor(value: unknown, options?: RegistryOptions);
  /** Every contract, in the file's order. */
  readonly contracts: UnifiedSkillContract[];
  /** The contract `id` names (`name@version`, or `name` for its highest version). */
  getSkill(id: string): UnifiedSkillContract | undefined;
  /** Ground a tool call with the runtime's answer. */
  ground(call: ToolCall): GroundResult;
}
