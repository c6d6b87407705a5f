-- trace-locks-file: server-side SQL Trace of Lock:Acquired and Lock:Released (events 24 and 23) to a file
-- source: catalog/sqlserver.yaml:659

-- apply
DECLARE @id int, @rc int, @maxfilesize bigint = 100, @on bit = 1;
EXEC @rc = sp_trace_create @traceid = @id OUTPUT, @options = 2, @tracefile = N'/var/opt/mssql/log/obsbench-trace-locks-file-20261122T000000', @maxfilesize = @maxfilesize, @stoptime = NULL, @filecount = 10;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_create failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 1, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 1 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 3, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 12, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 12 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 14, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 14 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 22, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 22 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 32, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 32 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 24, 35, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 24, 35 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 1, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 1 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 3, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 3 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 12, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 12 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 14, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 14 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 22, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 22 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 32, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 32 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setevent @id, 23, 35, @on;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setevent 23, 35 failed with code %d', 16, 1, @rc); RETURN; END;
EXEC @rc = sp_trace_setstatus @id, 1;
IF @rc <> 0 BEGIN IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END; RAISERROR(N'sp_trace_setstatus failed with code %d', 16, 1, @rc); RETURN; END;
SELECT @id;

-- revert
DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench-trace-locks-file-20261122T000000%');
IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END;
