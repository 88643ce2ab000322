"""The fields of Apple's decoded StoreKit 2 payload models and the values of their enums, as JSON, from the installed
app-store-server-library: the other side of the drift check (Tests/StoreForgeTests/AppleModelDriftTests.swift)."""
import enum, importlib, importlib.metadata, json, pkgutil
import attr
import appstoreserverlibrary.models as models

MODELS = ["JWSTransactionDecodedPayload", "JWSRenewalInfoDecodedPayload", "AppTransaction", "DecodedRealtimeRequestBody",
          "ResponseBodyV2DecodedPayload", "Data", "Summary", "ExternalPurchaseToken", "AppData", "TransactionCommitmentInfo",
          "RenewalCommitmentInfo"]
out = {"version": importlib.metadata.version("app-store-server-library"), "models": {}, "enums": {}}
for name in MODELS:
    cls = getattr(importlib.import_module(f"appstoreserverlibrary.models.{name}"), name)
    fields = [f.name for f in attr.fields(cls)]
    # A typed field `x` has a twin `rawX` holding the wire value; the twin is not a member of the JSON.
    twins = {f for f in fields if f.startswith("raw") and f[3:4].isupper() and (f[3].lower() + f[4:]) in fields}
    out["models"][name] = sorted(f for f in fields if f not in twins)
for info in pkgutil.iter_modules(models.__path__):
    module = importlib.import_module(f"appstoreserverlibrary.models.{info.name}")
    cls = getattr(module, info.name, None)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        out["enums"][info.name] = sorted(str(m.value) for m in cls)
print(json.dumps(out, indent=1, sort_keys=True))
