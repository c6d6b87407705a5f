-- trace-plans-file: server-side SQL Trace of actual plans (event 146, Showplan XML Statistics Profile) to 100 MB rollover files, all kept (its events are counted from them); the file provider never drops
-- source: catalog/sqlserver.yaml:95

-- apply
DECLARE @id int, @rc int, @maxfilesize bigint = 100, @on bit = 1;
EXEC @rc = sp_trace_create @traceid = @id OUTPUT, @options = 2, @tracefile = N'/var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000', @maxfilesize = @maxfilesize, @stoptime = NULL, @filecount = NULL;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_create failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 146, 1, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 146, 1 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 146, 3, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 146, 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 146, 12, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 146, 12 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 146, 35, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 146, 35 failed with code %d', 16, 1, @rc); RETURN; END;
DECLARE @f0 int = 7;
EXEC @rc = sp_trace_setfilter @id, 3, 0, 0, @f0;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setfilter column 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setstatus @id, 1;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setstatus failed with code %d', 16, 1, @rc); RETURN; END;
SELECT @id;

-- revert
DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000%');
IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END;

-- count events (trace)
SELECT dropped_event_count FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000%';
DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000%' AND status = 1);
IF @id IS NOT NULL EXEC sp_trace_setstatus @id, 0;
SELECT path FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000%';
-- from the oldest file the server kept: /var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000.trc until it rolls over past max_files
SELECT COUNT_BIG(*) FROM sys.fn_trace_gettable(N'/var/opt/mssql/log/obsbench-trace-plans-file-20261122T000000.trc', DEFAULT) WHERE EventClass IN (146) AND TextData LIKE N'%obsbench-tag%';
