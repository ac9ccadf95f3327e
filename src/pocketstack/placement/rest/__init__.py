"""Placement's route table (placement/handler.py upstream): one line per URL."""
from pocketstack.placement import microversion
from pocketstack.placement.rest import allocation_candidates as candidates
from pocketstack.placement.rest import allocations, classes_traits as ct, providers, root

RP = "/resource_providers/{uuid}"

ROUTES = {
    "/": {"GET": root.home},
    "/resource_providers": {"GET": providers.list_providers,
                            "POST": providers.create_provider},
    RP: {"GET": providers.show_provider, "PUT": providers.update_provider,
         "DELETE": providers.delete_provider},
    RP + "/inventories": {"GET": providers.list_inventories,
                          "POST": providers.create_inventory,
                          "PUT": providers.set_inventories,
                          "DELETE": providers.delete_inventories},
    RP + "/inventories/{rc}": {"GET": providers.show_inventory,
                               "PUT": providers.update_inventory,
                               "DELETE": providers.delete_inventory},
    RP + "/usages": {"GET": allocations.provider_usages},
    RP + "/aggregates": {"GET": providers.list_aggregates, "PUT": providers.set_aggregates},
    RP + "/traits": {"GET": providers.list_provider_traits,
                     "PUT": providers.set_provider_traits,
                     "DELETE": providers.delete_provider_traits},
    RP + "/allocations": {"GET": allocations.of_provider},
    "/resource_classes": {"GET": ct.list_classes, "POST": ct.create_class},
    "/resource_classes/{name}": {"GET": ct.show_class, "PUT": ct.update_class,
                                 "DELETE": ct.delete_class},
    "/traits": {"GET": ct.list_traits},
    "/traits/{name}": {"GET": ct.show_trait, "PUT": ct.put_trait, "DELETE": ct.delete_trait},
    "/allocations": {"POST": allocations.post},
    "/allocations/{consumer_uuid}": {"GET": allocations.show, "PUT": allocations.put,
                                     "DELETE": allocations.delete},
    "/usages": {"GET": allocations.usages},
    "/allocation_candidates": {"GET": candidates.list_candidates},
    "/reshaper": {"POST": allocations.reshape},
}

wrap = microversion.Microversion  # outside the fault wrapper: errors carry the version too
