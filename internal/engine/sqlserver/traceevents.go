package sqlserver

import (
	"fmt"
	"strconv"
	"strings"
)

// traceEvents are the data columns of each SQL Trace event class the
// catalog uses, copied from the "Data Columns" table of its page under
// https://learn.microsoft.com/sql/relational-databases/ (the page is
// named beside each). Each entry is "column id, name, type, filterable
// (y/n)". Add an event here, from its page, before a trace may record it.
var traceEvents = map[int]traceEvent{
	10: event("RPC:Completed", "event-classes/rpc-completed-event-class", `
		10 ApplicationName nvarchar y; 2 BinaryData image y; 9 ClientProcessID int y; 18 CPU int y;
		3 DatabaseID int y; 35 DatabaseName nvarchar y; 13 Duration bigint y; 15 EndTime datetime y;
		31 Error int y; 27 EventClass int n; 51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y;
		60 IsSystem int y; 11 LoginName nvarchar y; 41 LoginSid image y; 7 NTDomainName nvarchar y;
		6 NTUserName nvarchar y; 34 ObjectName nvarchar y; 16 Reads bigint y; 49 RequestID int y;
		48 RowCounts bigint y; 26 ServerName nvarchar n; 64 SessionLoginName nvarchar y; 12 SPID int y;
		14 StartTime datetime y; 1 TextData ntext y; 4 TransactionID bigint y; 17 Writes bigint y;
		50 XactSequence bigint y`),
	11: event("RPC:Starting", "event-classes/rpc-starting-event-class", `
		10 ApplicationName nvarchar y; 2 BinaryData image y; 9 ClientProcessID int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 27 EventClass int n; 51 EventSequence int n; 66 GroupID int y;
		8 HostName nvarchar y; 60 IsSystem int y; 11 LoginName nvarchar y; 41 LoginSid image y;
		7 NTDomainName nvarchar y; 6 NTUserName nvarchar y; 34 ObjectName nvarchar y; 49 RequestID int y;
		26 ServerName nvarchar n; 64 SessionLoginName nvarchar y; 12 SPID int y; 14 StartTime datetime y;
		1 TextData ntext y; 4 TransactionID bigint y; 50 XactSequence bigint y`),
	12: event("SQL:BatchCompleted", "event-classes/sql-batchcompleted-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 18 CPU int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 13 Duration bigint y; 15 EndTime datetime y; 31 Error int y;
		27 EventClass int n; 51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y;
		60 IsSystem int y; 11 LoginName nvarchar y; 41 LoginSid image y; 7 NTDomainName nvarchar y;
		6 NTUserName nvarchar y; 16 Reads bigint y; 49 RequestID int y; 48 RowCounts bigint y;
		26 ServerName nvarchar n; 64 SessionLoginName nvarchar y; 12 SPID int y; 14 StartTime datetime y;
		1 TextData ntext y; 4 TransactionID bigint y; 17 Writes bigint y; 50 XactSequence bigint y`),
	13: event("SQL:BatchStarting", "event-classes/sql-batchstarting-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 3 DatabaseID int y; 35 DatabaseName nvarchar y;
		27 EventClass int n; 51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y;
		60 IsSystem int y; 11 LoginName nvarchar y; 41 LoginSid image y; 7 NTDomainName nvarchar y;
		6 NTUserName nvarchar y; 49 RequestID int y; 26 ServerName nvarchar n; 64 SessionLoginName nvarchar y;
		12 SPID int y; 14 StartTime datetime y; 1 TextData ntext y; 4 TransactionID bigint y;
		50 XactSequence bigint y`),
	14: event("Audit Login", "event-classes/audit-login-event-class", `
		10 ApplicationName nvarchar y; 2 BinaryData image y; 9 ClientProcessID int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 27 EventClass int n; 51 EventSequence int n; 21 EventSubClass int y;
		8 HostName nvarchar y; 25 IntegerData int y; 60 IsSystem int y; 11 LoginName nvarchar y;
		41 LoginSid image y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y; 49 RequestID int y;
		26 ServerName nvarchar n; 64 SessionLoginName nvarchar y; 12 SPID int y; 14 StartTime datetime y;
		23 Success int y; 1 TextData ntext y; 66 GroupID int y`),
	// Audit Logout has no TextData.
	15: event("Audit Logout", "event-classes/audit-logout-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 18 CPU int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 13 Duration bigint y; 15 EndTime datetime y; 27 EventClass int n;
		51 EventSequence int n; 21 EventSubClass int y; 8 HostName nvarchar y; 60 IsSystem int y;
		11 LoginName nvarchar y; 41 LoginSid image y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y;
		16 Reads bigint y; 49 RequestID int y; 26 ServerName nvarchar n; 64 SessionLoginName nvarchar y;
		12 SPID int y; 14 StartTime datetime y; 23 Success int y; 17 Writes bigint y; 66 GroupID int y`),
	// Lock:Released has no Duration, EndTime or BigintData1, and no
	// DatabaseName: the study's filter is on DatabaseID.
	23: event("Lock:Released", "event-classes/lock-released-event-class", `
		10 ApplicationName nvarchar y; 2 BinaryData image y; 9 ClientProcessID int y; 3 DatabaseID int y;
		27 EventClass int n; 51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y;
		55 IntegerData2 int y; 60 IsSystem int y; 11 LoginName nvarchar y; 41 LoginSid image y;
		32 Mode int y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y; 22 ObjectID int y;
		56 ObjectID2 bigint y; 58 OwnerID int y; 49 RequestID int y; 26 ServerName nvarchar n;
		64 SessionLoginName nvarchar y; 12 SPID int y; 14 StartTime datetime y; 1 TextData ntext y;
		4 TransactionID bigint y; 57 Type int y`),
	24: event("Lock:Acquired", "event-classes/lock-acquired-event-class", `
		10 ApplicationName nvarchar y; 52 BigintData1 bigint y; 2 BinaryData image y; 9 ClientProcessID int y;
		3 DatabaseID int y; 13 Duration bigint y; 15 EndTime datetime y; 27 EventClass int n;
		51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y; 55 IntegerData2 int y;
		60 IsSystem int y; 11 LoginName nvarchar y; 41 LoginSid image y; 32 Mode int y;
		7 NTDomainName nvarchar y; 6 NTUserName nvarchar y; 22 ObjectID int y; 56 ObjectID2 bigint y;
		58 OwnerID int y; 49 RequestID int y; 26 ServerName nvarchar n; 64 SessionLoginName nvarchar y;
		12 SPID int y; 14 StartTime datetime y; 1 TextData ntext y; 4 TransactionID bigint y; 57 Type int y`),
	40: event("SQL:StmtStarting", "event-classes/sql-stmtstarting-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 3 DatabaseID int y; 35 DatabaseName nvarchar y;
		27 EventClass int n; 51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y;
		55 IntegerData2 int y; 60 IsSystem int y; 5 LineNumber int y; 11 LoginName nvarchar y;
		41 LoginSid image y; 29 NestLevel int y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y;
		61 Offset int y; 49 RequestID int y; 26 ServerName nvarchar n; 64 SessionLoginName nvarchar y;
		12 SPID int y; 14 StartTime datetime y; 30 State int y; 1 TextData ntext y; 4 TransactionID bigint y;
		50 XactSequence bigint y`),
	41: event("SQL:StmtCompleted", "event-classes/sql-stmtcompleted-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 18 CPU int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 13 Duration bigint y; 15 EndTime datetime y; 27 EventClass int n;
		51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y; 25 IntegerData int y;
		55 IntegerData2 int y; 60 IsSystem int y; 5 LineNumber int y; 11 LoginName nvarchar y;
		41 LoginSid image y; 29 NestLevel int y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y;
		61 Offset int y; 16 Reads bigint y; 49 RequestID int y; 48 RowCounts bigint y;
		26 ServerName nvarchar n; 64 SessionLoginName nvarchar y; 12 SPID int y; 14 StartTime datetime y;
		1 TextData ntext y; 4 TransactionID bigint y; 17 Writes bigint y; 50 XactSequence bigint y`),
	44: event("SP:StmtStarting", "event-classes/sp-stmtstarting-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 3 DatabaseID int y; 35 DatabaseName nvarchar y;
		27 EventClass int n; 51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y;
		55 IntegerData2 int y; 60 IsSystem int y; 5 LineNumber int y; 11 LoginName nvarchar y;
		41 LoginSid image y; 29 NestLevel int y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y;
		22 ObjectID int y; 34 ObjectName nvarchar y; 28 ObjectType int y; 61 Offset int y;
		49 RequestID int y; 26 ServerName nvarchar n; 64 SessionLoginName nvarchar y;
		62 SourceDatabaseID int y; 12 SPID int y; 14 StartTime datetime y; 30 State int y;
		1 TextData ntext y; 4 TransactionID bigint y; 50 XactSequence bigint y`),
	45: event("SP:StmtCompleted", "event-classes/sp-stmtcompleted-event-class", `
		10 ApplicationName nvarchar y; 9 ClientProcessID int y; 18 CPU int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 13 Duration bigint y; 15 EndTime datetime y; 27 EventClass int n;
		51 EventSequence int n; 66 GroupID int y; 8 HostName nvarchar y; 25 IntegerData int y;
		55 IntegerData2 int y; 60 IsSystem int y; 5 LineNumber int y; 11 LoginName nvarchar y;
		41 LoginSid image y; 29 NestLevel int y; 7 NTDomainName nvarchar y; 6 NTUserName nvarchar y;
		22 ObjectID int y; 34 ObjectName nvarchar y; 28 ObjectType int y; 61 Offset int y;
		16 Reads bigint y; 49 RequestID int y; 48 RowCounts bigint y; 26 ServerName nvarchar n;
		64 SessionLoginName nvarchar y; 62 SourceDatabaseID int y; 12 SPID int y; 14 StartTime datetime y;
		1 TextData ntext y; 4 TransactionID bigint y; 17 Writes bigint y; 50 XactSequence bigint y`),
	146: event("Showplan XML Statistics Profile", "event-classes/showplan-xml-statistics-profile-event-class", `
		10 ApplicationName nvarchar y; 2 BinaryData image n; 9 ClientProcessID int y; 3 DatabaseID int y;
		35 DatabaseName nvarchar y; 27 EventClass int n; 51 EventSequence int n; 66 GroupID int y;
		8 HostName nvarchar y; 25 IntegerData int y; 60 IsSystem int y; 5 LineNumber int y;
		11 LoginName nvarchar y; 41 LoginSID image n; 29 NestLevel int y; 7 NTDomainName nvarchar y;
		22 ObjectID int y; 34 ObjectName nvarchar y; 28 ObjectType int y; 49 RequestID int y;
		26 ServerName nvarchar n; 64 SessionLoginName nvarchar y; 12 SPID int y; 14 StartTime datetime y;
		1 TextData ntext y; 4 TransactionID bigint y; 50 XactSequence bigint y`),
}

// event reads an event's column table as written above.
func event(name, page, table string) traceEvent {
	ev := traceEvent{name: name, page: page, columns: map[int]traceColumn{}}
	for _, entry := range strings.Split(table, ";") {
		f := strings.Fields(entry)
		if len(f) != 4 {
			panic(fmt.Sprintf("sqlserver: event %s: column entry %q is not \"id name type y|n\"", name, entry))
		}
		id, err := strconv.Atoi(f[0])
		if err != nil || (f[3] != "y" && f[3] != "n") {
			panic(fmt.Sprintf("sqlserver: event %s: column entry %q is not \"id name type y|n\"", name, entry))
		}
		ev.columns[id] = traceColumn{name: f[1], typ: f[2], filterable: f[3] == "y"}
	}
	return ev
}
