// The project endpoints' shapes (docs/api.md, "Projects"): projects, API keys, usage and analytics, and the
// dashboard's view of a payload. The dashboard's code takes its types from them.
import { type Static, Type } from 'typebox'
import { AnyObject, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { PayloadView } from '../payloads/schemas.js'
import { ANALYTICS_PERIODS, DEFAULT_ANALYTICS_PERIOD } from './analytics.js'
import { DEFAULT_API_KEY_NAME, MAX_NAME_CHARS } from './names.js'
import { PLAN_NAMES } from './plans.js'
import { MAX_LOGO_BYTES } from './project-branding.js'

const Name = (description: string) => Type.String({ description: `${description}; 1 to ${MAX_NAME_CHARS} characters after trimming` })

export const ProjectParams = Type.Object({ id: Type.String({ description: 'Project id, proj_...' }) }, { additionalProperties: false })
export const KeyParams = Type.Object(
  { id: Type.String(), keyId: Type.String({ description: 'API key id, key_...' }) },
  { additionalProperties: false },
)
export const ProjectPayloadParams = Type.Object(
  { id: Type.String(), uuid: Type.String({ description: 'Payload UUID' }) },
  { additionalProperties: false },
)

export const CreateProjectBody = Type.Object({ name: Name('Project name') }, { additionalProperties: false })
export const CreateKeyBody = Type.Object(
  { name: Type.Optional(Name(`Key name (default "${DEFAULT_API_KEY_NAME}")`)) },
  { additionalProperties: false },
)

export const CreatedProject = Type.Object({ id: Type.String(), name: Type.String(), apiKey: Type.String() })
export type CreatedProject = Static<typeof CreatedProject>

export const ProjectSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  displayName: Nullable(Type.String(), 'What the signing page names the project by; null: the name is shown'),
  plan: StringEnum(PLAN_NAMES),
  createdAt: Timestamp(),
})
export type ProjectSummary = Static<typeof ProjectSummary>

export const ProjectList = Type.Object({ projects: Type.Array(ProjectSummary) })
export type ProjectList = Static<typeof ProjectList>

export const ProjectWebsite = Nullable(
  Type.Object({
    url: Type.String({ description: 'The origin the owner set' }),
    verified: Type.Boolean({ description: 'The signing page shows the website only when verified' }),
    verifiedAt: NullableTimestamp('When the proof was last found'),
    proofUrl: Type.String({ description: 'Where the website must publish the proof' }),
    proofLine: Type.String({ description: 'The line the proof file must hold' }),
  }),
  'The project website, verified by a proof file it publishes (docs/pages.md)',
)
export type ProjectWebsite = Static<typeof ProjectWebsite>

export const ProjectSettingsBody = Type.Object(
  {
    displayName: Type.Optional(
      Nullable(
        Type.String({ maxLength: 1000 }),
        `Shown to end users on the signing page; 1 to ${MAX_NAME_CHARS} characters; null or "" clears it`,
      ),
    ),
    websiteUrl: Type.Optional(
      Nullable(Type.String({ maxLength: 4096 }), 'An https URL of the project website (its origin is kept); null or "" clears it'),
    ),
  },
  { additionalProperties: false },
)
export type ProjectSettings = Static<typeof ProjectSettingsBody>

/** GET /logos/{projectId}/{sha256}: a project's logo, public. */
export const LogoParams = Type.Object({ projectId: Type.String(), sha256: Type.String() }, { additionalProperties: false })

export const LogoBody = Type.Object(
  {
    image: Type.String({
      description: `A data URL, data:image/png;base64,...: PNG, JPEG or WebP, at most ${MAX_LOGO_BYTES / 1024} KB`,
    }),
  },
  { additionalProperties: false },
)

export const ProjectDetail = Type.Object({
  ...ProjectSummary.properties,
  website: ProjectWebsite,
  logoUrl: Nullable(Type.String(), "The logo's public URL on this service"),
  usage: Type.Object(
    { month: Type.String({ description: 'UTC month, YYYY-MM' }), used: Type.Integer(), limit: Type.Integer() },
    { description: "Payloads created this month against the plan's monthly limit" },
  ),
  limits: Type.Object({
    requestsPerMinute: Type.Integer(),
    minPollIntervalMs: Type.Integer(),
    maxExpiresInSeconds: Type.Integer(),
    monthlyPayloads: Type.Integer(),
  }),
})
export type ProjectDetail = Static<typeof ProjectDetail>

export const WebsiteCheck = Type.Object({
  check: Type.Object({ verified: Type.Boolean(), problem: Type.Optional(Type.String()) }),
  project: ProjectDetail,
})
export type WebsiteCheck = Static<typeof WebsiteCheck>

export const ApiKeySummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'The start of the key, enough to recognise it; the full key is shown only at creation' }),
  createdAt: Timestamp(),
  lastUsedAt: NullableTimestamp('Updated at most once a minute'),
  revokedAt: NullableTimestamp('Set once the key is revoked'),
})
export type ApiKeySummary = Static<typeof ApiKeySummary>

export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeySummary) })
export type ApiKeyList = Static<typeof ApiKeyList>

export const CreatedApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  apiKey: Type.String({ description: 'The full key: shown only in this response' }),
  createdAt: Timestamp(),
})
export type CreatedApiKey = Static<typeof CreatedApiKey>

export const RevokedApiKey = Type.Object({ id: Type.String(), revokedAt: Timestamp() })
export type RevokedApiKey = Static<typeof RevokedApiKey>

export const AnalyticsQuery = Type.Object(
  { period: Type.Optional(StringEnum(ANALYTICS_PERIODS, { default: DEFAULT_ANALYTICS_PERIOD, description: '30d (default) or 7d' })) },
  { additionalProperties: false },
)

const Count = Type.Integer({ minimum: 0 })
export const DailyAnalytics = Type.Object({
  day: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
  total: Count,
  signed: Count,
  rejected: Count,
  expired: Count,
})
export type DailyAnalytics = Static<typeof DailyAnalytics>

export const Analytics = Type.Object({
  period: StringEnum(ANALYTICS_PERIODS),
  totals: Type.Object(
    {
      total: Count,
      signed: Count,
      rejected: Count,
      expired: Count,
      pending: Count,
      signingRate: Type.Integer({ description: 'round(100 * signed / (signed + rejected + expired)); 0 when none is resolved' }),
    },
    { description: 'Payloads created in the period, by current status' },
  ),
  walletBreakdown: Type.Array(Type.Object({ walletAdapter: Type.String(), count: Count }), {
    description: 'Signed payloads of the period by wallet, largest first',
  }),
  daily: Type.Array(DailyAnalytics, { description: 'One entry per UTC day of the period, oldest first; days without payloads are zeros' }),
})
export type Analytics = Static<typeof Analytics>

/** A payload with what was requested: the dashboard's detail view. */
export const PayloadDetail = Type.Object({
  ...PayloadView.properties,
  transaction: Nullable(AnyObject(), 'The requested transaction'),
  message: Nullable(Type.String(), 'signMessage: the message to sign'),
  customInstructions: Nullable(Type.String()),
  returnUrl: Nullable(Type.String()),
})
export type PayloadDetail = Static<typeof PayloadDetail>
