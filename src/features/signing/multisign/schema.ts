// The multisign object of reads, the live stream, webhook bodies and the wallet-facing API (MultisignView).
import { Type } from '@sinclair/typebox'
import { NullableTimestamp } from '../../../platform/http/schemas.js'

export const MultisignViewSchema = Type.Object(
  {
    quorum: Type.Integer({ description: "The signer list's quorum" }),
    weight: Type.Integer({ description: 'The weight of the signatures collected so far' }),
    signers: Type.Array(
      Type.Object({
        account: Type.String(),
        weight: Type.Integer(),
        signed: Type.Boolean(),
        signedAt: NullableTimestamp('When this signer signed'),
        rejectedAt: NullableTimestamp('When this signer rejected'),
      }),
    ),
  },
  { description: 'options.multisign only: the signer list of the Account and who has answered' },
)
