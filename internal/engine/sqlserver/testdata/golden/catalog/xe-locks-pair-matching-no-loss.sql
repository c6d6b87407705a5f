-- xe-locks-pair-matching-no-loss: lock_acquired and lock_released to pair matching of acquired and released (only unmatched pairs are kept), NO_EVENT_LOSS
-- source: catalog/sqlserver.yaml:740

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_pair_matching_no_loss] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 7 AND sqlserver.is_system = 0)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)
    WHERE (database_id = 7 AND sqlserver.is_system = 0))
ADD TARGET package0.pair_matching(SET begin_event = N'sqlserver.lock_acquired', begin_matching_columns = N'resource_0, resource_1, resource_2, transaction_id, database_id', end_event = N'sqlserver.lock_released', end_matching_columns = N'resource_0, resource_1, resource_2, transaction_id, database_id', respond_to_memory_pressure = (1))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_pair_matching_no_loss] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_pair_matching_no_loss') ALTER EVENT SESSION [obsbench_xe_locks_pair_matching_no_loss] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_pair_matching_no_loss') DROP EVENT SESSION [obsbench_xe_locks_pair_matching_no_loss] ON SERVER;
