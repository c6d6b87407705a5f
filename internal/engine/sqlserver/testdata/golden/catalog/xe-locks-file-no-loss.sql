-- xe-locks-file-no-loss: lock_acquired and lock_released to an event file (100 MB files, 10 kept), NO_EVENT_LOSS
-- source: catalog/sqlserver.yaml:359

-- apply
CREATE EVENT SESSION [obsbench_xe_locks_file_no_loss] ON SERVER
ADD EVENT sqlserver.lock_acquired(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id)),
ADD EVENT sqlserver.lock_released(SET collect_database_name = (1), collect_resource_description = (1)
    ACTION(sqlserver.session_id, sqlserver.database_id))
ADD TARGET package0.event_file(SET filename = N'/var/opt/mssql/log/obsbench_xe_locks_file_no_loss_20261122T000000.xel', max_file_size = (100), max_rollover_files = (10))
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
ALTER EVENT SESSION [obsbench_xe_locks_file_no_loss] ON SERVER STATE = START;

-- revert
IF EXISTS (SELECT 1 FROM sys.dm_xe_sessions WHERE name = N'obsbench_xe_locks_file_no_loss') ALTER EVENT SESSION [obsbench_xe_locks_file_no_loss] ON SERVER STATE = STOP;
IF EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = N'obsbench_xe_locks_file_no_loss') DROP EVENT SESSION [obsbench_xe_locks_file_no_loss] ON SERVER;
