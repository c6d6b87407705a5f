-- trace-locks-file-filtered-out: the lock trace with a filter that never matches (DatabaseID = an id no database has, as the study's 77): SQL Trace filters after collecting, so it still costs
-- source: catalog/sqlserver.yaml:833

-- apply
DECLARE @id int, @rc int, @maxfilesize bigint = 100, @on bit = 1;
EXEC @rc = sp_trace_create @traceid = @id OUTPUT, @options = 2, @tracefile = N'/var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000', @maxfilesize = @maxfilesize, @stoptime = NULL, @filecount = 10;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_create failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 2, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 2 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 3, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 4, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 4 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 12, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 12 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 22, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 22 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 32, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 32 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 55, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 55 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 56, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 56 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 57, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 57 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 58, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 58 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 60, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 60 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 13, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 13 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 52, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 52 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 2, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 2 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 3, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 4, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 4 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 12, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 12 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 22, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 22 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 32, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 32 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 55, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 55 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 56, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 56 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 57, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 57 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 58, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 58 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 60, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 60 failed with code %d', 16, 1, @rc); RETURN; END;
DECLARE @f0 int = 12;
EXEC @rc = sp_trace_setfilter @id, 3, 0, 0, @f0;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setfilter column 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setstatus @id, 1;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setstatus failed with code %d', 16, 1, @rc); RETURN; END;
SELECT @id;

-- revert
DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000%');
IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END;

-- count events (trace)
SELECT dropped_event_count FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000%';
DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000%' AND status = 1);
IF @id IS NOT NULL EXEC sp_trace_setstatus @id, 0;
SELECT path FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000%';
-- from the oldest file the server kept: /var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000.trc until it rolls over past max_files
SELECT COUNT_BIG(*) FROM sys.fn_trace_gettable(N'/var/opt/mssql/log/obsbench-trace-locks-file-filtered-out-20261122T000000.trc', DEFAULT) WHERE EventClass IN (24, 23);
