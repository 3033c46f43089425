#!/usr/bin/env python3
"""Verify a governed Agent Card with the official a2a-sdk's own signature verifier.

    python verify_card.py CARD.json JWKS.json

Run with the interpreter of .venv/sdk1 for a 1.0 card (the card is read with the SDK's
protobuf model, unknown members refused) or .venv/sdk03 for a 0.3 card (its pydantic model).
The key comes from the key set by the signature's kid, as the DVARA API tells clients to do.
Prints one JSON line: {"ok": bool, "kids": [...], "tampered_rejected": bool, "sdk": "..."}.
"""

import copy
import json
import sys

from jwt.api_jwk import PyJWK

from a2a.utils.signing import (
    SignatureVerificationError,
    create_signature_verifier,
)


def load_card(card_json):
    from a2a.types import AgentCard

    if hasattr(AgentCard, 'DESCRIPTOR'):  # a2a-sdk 1.x: protobuf types
        from google.protobuf.json_format import ParseDict

        return ParseDict(card_json, AgentCard(), ignore_unknown_fields=False), '1.x'
    return AgentCard.model_validate(card_json), '0.3'  # a2a-sdk 0.3: pydantic


def main():
    card_json = json.load(open(sys.argv[1]))
    jwks = json.load(open(sys.argv[2]))
    keys = {k['kid']: PyJWK(k) for k in jwks['keys']}
    seen = []

    def key_provider(kid, jku):
        seen.append({'kid': kid, 'jku': jku})
        return keys[kid]

    verify = create_signature_verifier(key_provider, ['ES256'])
    card, sdk = load_card(card_json)
    out = {'sdk': sdk, 'kids': seen}
    try:
        verify(card)
        out['ok'] = True
    except SignatureVerificationError as e:
        out['ok'] = False
        out['error'] = repr(e)
    # The same verifier must refuse the card once a member changes.
    tampered = copy.deepcopy(card_json)
    tampered['name'] = tampered.get('name', '') + ' (changed)'
    try:
        verify(load_card(tampered)[0])
        out['tampered_rejected'] = False
    except SignatureVerificationError:
        out['tampered_rejected'] = True
    print(json.dumps(out))


if __name__ == '__main__':
    main()
