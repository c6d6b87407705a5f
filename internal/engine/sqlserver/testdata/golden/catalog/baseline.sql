-- baseline: the server as it is, with its own default trace and system_health session, nothing added
-- source: catalog/sqlserver.yaml:44

-- apply

-- revert
